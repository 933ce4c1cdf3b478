// A2A tasks as they live: cancelling a turn mid-stream, who sees which task, authentication, the
// task cap and eviction, the admin's task routes and audit, TaskStateChanged on the admin stream,
// the a2a protocol badge, and platform.a2a.enabled=false.
import t from 'tap'
import { TaskState } from '@a2a-js/sdk'
import { AI } from '../../runtime/ai/index.js'
import { A2A } from '../../runtime/a2a/key.js'
import { OpenAiServer, deltaChunk, sseEvents as openAiSse } from '../helpers/openai-server.js'
import { call, addHelperAgent, governedAdminPlatform, WRITER, ALICE, BOB } from '../admin/helpers.js'
import { sseEvents } from '../admin/event-clients.js'
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { start, clientFor, textMessage, textOf, rpc, until } from './a2a-helpers.js'

const send = (text: string, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] }, ...extra }
})

t.test('cancelling a task mid-turn cancels the turn; the admin sees, cancels and audits tasks', async (t) => {
  const fake = await new OpenAiServer().start()
  t.teardown(() => fake.close())
  // a slow model: 100 words, one every 50 ms
  fake.chat = () => ({
    stream: openAiSse(Array.from({ length: 100 }, (_, i) => deltaChunk({ content: `w${i} ` }))),
    intervalMs: 50
  })
  const tp = await start({
    ...WRITER,
    'platform.admin.mcp-write-tools': true,
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': fake.url,
    'platform.ai.openai.model': 'test-model'
  })
  t.teardown(tp.close)
  const ai = tp.platform.area(AI)
  const client = await clientFor(tp.url, 'demo', ALICE)
  const events = await sseEvents(tp.url, '', { authorization: `Bearer ${ALICE}` })
  t.teardown(() => events.close())

  t.test('CancelTask on a working task ends its turn', async (t) => {
    const stream = client.sendMessageStream(textMessage('talk slowly'))
    const first: any = (await stream.next()).value
    const id = first.payload.value.id
    t.equal(first.payload.value.status.state, TaskState.TASK_STATE_WORKING)
    const chunk: any = (await stream.next()).value
    t.equal(chunk.payload.$case, 'artifactUpdate', 'the model is talking')
    t.equal(ai.inFlight(), 1, 'the turn runs')
    const cut = Date.now()
    const canceled: any = await client.cancelTask({ id, tenant: '', metadata: undefined })
    t.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED)
    t.equal(textOf(canceled.status.message), 'Canceled by request')
    t.ok(await until(() => ai.inFlight() === 0), 'the turn ended')
    t.ok(Date.now() - cut < 2000, 'promptly, not after the 5 s stream')
    // the stream's last event is the cancellation, then it closes
    let last: any
    for await (const e of stream) last = e
    t.equal(last.payload.$case, 'statusUpdate')
    t.equal(last.payload.value.status.state, TaskState.TASK_STATE_CANCELED)
    const again = await rpc(
      `${tp.url}/platform/agent/demo/a2a`,
      { jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id } },
      { authorization: `Bearer ${ALICE}` }
    )
    t.match(again.body.error, { code: -32002, message: `Task not cancelable: ${id}` })
    // every transition reached the admin stream, A2A's marked as such
    const seen = await events.inbox.type(
      'TaskStateChanged',
      (e) => e.taskId === id && e.newState === 'TASK_STATE_CANCELED'
    )
    t.match(seen, {
      taskId: id,
      oldState: 'TASK_STATE_WORKING',
      newState: 'TASK_STATE_CANCELED',
      protocol: 'a2a',
      seq: Number
    })
    t.ok(
      events.inbox.all.some(
        (e) =>
          e.type === 'TaskStateChanged' &&
          e.taskId === id &&
          e.oldState === 'TASK_STATE_SUBMITTED' &&
          e.newState === 'TASK_STATE_WORKING'
      )
    )
  })

  t.test('SubscribeToTask: every stream on a task gets its events; one leaving changes nothing', async (t) => {
    const started = await rpc(
      `${tp.url}/platform/agent/demo/a2a`,
      send('subscribe', { configuration: { returnImmediately: true } }),
      { authorization: `Bearer ${ALICE}` }
    )
    const id = started.body.result.task.id
    const a = client.resubscribeTask({ id, tenant: '' })
    const b = client.resubscribeTask({ id, tenant: '' })
    const leaver = client.resubscribeTask({ id, tenant: '' })
    for (const s of [a, b, leaver]) {
      const first: any = (await s.next()).value
      t.equal(first.payload.$case, 'task', 'the task first')
      t.equal(first.payload.value.status.state, TaskState.TASK_STATE_WORKING)
    }
    const chunk: any = (await a.next()).value
    t.equal(chunk.payload.$case, 'artifactUpdate', 'then what the turn says')
    await leaver.return(undefined)
    await new Promise((r) => setTimeout(r, 100))
    t.equal(
      (await tp.platform.area(A2A).tasks.get(id))?.state,
      'TASK_STATE_WORKING',
      'a stream leaving does not cancel the task'
    )
    await client.cancelTask({ id, tenant: '', metadata: undefined })
    for (const s of [a, b]) {
      let last: any
      for await (const e of s) last = e
      t.equal(last.payload.value.status.state, TaskState.TASK_STATE_CANCELED, 'each stream ends with the task')
    }
    t.ok(await until(() => ai.inFlight() === 0))
  })

  t.test('admin: list, detail and cancel with its audit entry', async (t) => {
    const started = await rpc(
      `${tp.url}/platform/agent/demo/a2a`,
      send('talk', { configuration: { returnImmediately: true } }),
      {
        authorization: `Bearer ${BOB}`
      }
    )
    const task = started.body.result.task
    t.equal(task.status.state, 'TASK_STATE_WORKING', 'returnImmediately answers while the turn runs')
    const list = await call(tp, 'GET', '/tasks', { token: BOB })
    t.equal(list.status, 200)
    t.match(list.body[0], {
      taskId: task.id,
      contextId: task.contextId,
      state: 'TASK_STATE_WORKING',
      statusMessage: '',
      createdAt: String
    })
    t.same(Object.keys(list.body[0]).sort(), ['contextId', 'createdAt', 'state', 'statusMessage', 'taskId'])
    t.equal((await call(tp, 'GET', `/tasks?contextId=${task.contextId}`, { token: BOB })).body.length, 1)
    t.same((await call(tp, 'GET', '/tasks?contextId=none', { token: BOB })).body, [])
    const detail = await call(tp, 'GET', `/tasks/${task.id}`, { token: BOB })
    t.match(detail.body, {
      taskId: task.id,
      messageCount: 1,
      artifactCount: Number,
      metadata: { agent: 'demo', owner: 'bob' }
    })
    t.equal((await call(tp, 'GET', '/overview')).body.taskCount, tp.platform.area(A2A).tasks.size)
    t.equal(tp.platform.area(A2A).tasks.size, 3, 'the tasks of the tests before and this one')
    // bob lacks the admin role: refused, nothing canceled
    t.equal((await call(tp, 'POST', `/tasks/${task.id}/cancel`, { token: BOB })).status, 403)
    t.equal((await tp.platform.area(A2A).tasks.get(task.id))?.state, 'TASK_STATE_WORKING')
    const res = await call(tp, 'POST', `/tasks/${task.id}/cancel`, { token: ALICE })
    t.same(res.body, { status: 'task canceled' })
    t.ok(await until(() => ai.inFlight() === 0), 'the turn ended')
    t.match((await call(tp, 'GET', `/tasks/${task.id}`, { token: BOB })).body, {
      state: 'TASK_STATE_CANCELED',
      statusMessage: 'Canceled by request'
    })
    const audit = await call(tp, 'GET', '/audit?limit=10', { token: ALICE })
    t.ok(
      audit.body.some(
        (e: any) => e.action === 'cancel_task' && e.target === task.id && e.principal === 'alice' && e.success === true
      ),
      'cancel_task audited'
    )
    const twice = await call(tp, 'POST', `/tasks/${task.id}/cancel`, { token: ALICE })
    t.match(twice, { status: 409, body: { code: 'PLT_ERR_TASK_NOT_CANCELABLE' } })
    t.match(await call(tp, 'POST', '/tasks/nope/cancel', { token: ALICE }), {
      status: 404,
      body: { code: 'PLT_ERR_UNKNOWN_TASK' }
    })
    // bob's own view over A2A shows his task canceled
    const mine = await rpc(
      `${tp.url}/platform/agent/demo/a2a`,
      { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: task.id } },
      { authorization: `Bearer ${BOB}` }
    )
    t.equal(mine.body.result.status.state, 'TASK_STATE_CANCELED')
  })

  t.test('the admin MCP tools list and cancel a real A2A task', async (t) => {
    const mcp = new McpClient({ name: 'a2a-test', version: '1.0.0' })
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(tp.url + '/platform/mcp'), {
        requestInit: { headers: { authorization: `Bearer ${ALICE}` } }
      })
    )
    t.teardown(() => mcp.close())
    const task = (
      await rpc(`${tp.url}/platform/agent/demo/a2a`, send('via mcp', { configuration: { returnImmediately: true } }))
    ).body.result.task
    const listed: any = await mcp.callTool({ name: 'platform_list_tasks', arguments: { contextId: task.contextId } })
    t.match(JSON.parse(listed.content[0].text), [{ taskId: task.id, state: 'TASK_STATE_WORKING' }])
    const canceled: any = await mcp.callTool({ name: 'platform_cancel_task', arguments: { taskId: task.id } })
    t.same(canceled.structuredContent, { status: 'task canceled' })
    t.match(tp.platform.audit.entries(1)[0], {
      principal: 'alice',
      action: 'cancel_task',
      target: task.id,
      success: true
    })
    t.equal((await tp.platform.area(A2A).tasks.get(task.id))?.state, 'TASK_STATE_CANCELED')
    t.ok(await until(() => ai.inFlight() === 0), 'the turn ended')
  })

  t.test('a turn that fails makes a FAILED task saying why', async (t) => {
    const slow = fake.chat
    fake.chat = () => ({ status: 500, json: { error: { message: 'model exploded' } } })
    t.teardown(() => {
      fake.chat = slow
    })
    const task: any = await client.sendMessage(textMessage('boom'))
    t.equal(task.status.state, TaskState.TASK_STATE_FAILED)
    t.match(textOf(task.status.message), /500|model exploded/)
    t.same(task.artifacts, [], 'no answer, no artifact')
  })

  t.test('the agent lists a2a among its protocols', async (t) => {
    const agents = await call(tp, 'GET', '/agents')
    const demo = agents.body.find((a: any) => a.name === 'demo')
    t.ok(demo.protocols.includes('a2a'))
    t.same(ai.agents().find((a) => a.name === 'demo')?.endpoints.a2a, '/platform/agent/demo/a2a')
  })
})

t.test('a caller sees only its own tasks unless its role sees all; auth as on the agent endpoints', async (t) => {
  const tp = await start({
    'platform.auth.tokens': [
      { token: ALICE, principal: 'alice', roles: ['a2a-operator'] },
      { token: BOB, principal: 'bob', roles: [] }
    ],
    'platform.a2a.all-tasks-role': 'a2a-operator',
    'platform.ai.endpoint.auth': 'required'
  })
  t.teardown(tp.close)
  const url = `${tp.url}/platform/agent/demo/a2a`
  const as = (token: string) => ({ authorization: `Bearer ${token}` })

  const anon = await rpc(url, send('hi'))
  t.equal(anon.status, 401)
  t.match(anon.body, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: /requires an authenticated principal/ }
  })
  t.equal(tp.platform.area(A2A).tasks.size, 0, 'nothing created')
  t.equal(
    (await fetch(`${tp.url}/platform/agent/demo/.well-known/agent-card.json`)).status,
    200,
    'the card stays public'
  )
  const card = await (await fetch(`${tp.url}/platform/agent/demo/.well-known/agent-card.json`)).json()
  t.same(card.securityRequirements, [{ schemes: { bearer: { list: [] } } }], 'and says a bearer token is required')

  const bobs = (await rpc(url, send('bob asks'), as(BOB))).body.result.task
  const bob2 = await clientFor(tp.url, 'demo', BOB)
  t.equal((await bob2.getTask({ id: bobs.id, tenant: '' })).id, bobs.id)
  const alice = await clientFor(tp.url, 'demo', ALICE)
  // alice's role sees everyone's
  t.equal((await alice.getTask({ id: bobs.id, tenant: '' })).id, bobs.id)
  const alices = (await rpc(url, send('alice asks'), as(ALICE))).body.result.task
  const bobList = (await rpc(url, { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }, as(BOB))).body.result
  t.same(
    bobList.tasks.map((x: any) => x.id),
    [bobs.id],
    'bob lists his own only'
  )
  t.equal(bobList.totalSize, 1)
  const aliceList = (await rpc(url, { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }, as(ALICE))).body.result
  t.equal(aliceList.totalSize, 2)
  // bob cannot see, subscribe to or cancel alice's task: to him it does not exist
  for (const method of ['GetTask', 'CancelTask', 'SubscribeToTask'])
    t.match(
      (await rpc(url, { jsonrpc: '2.0', id: 1, method, params: { id: alices.id } }, as(BOB))).body.error,
      {
        code: -32001,
        message: `Unknown task: ${alices.id}`
      },
      method
    )
})

t.test('at the cap finished tasks make room, anonymous ones first; terminal tasks are evicted', async (t) => {
  const tp = await start({ ...WRITER, 'platform.a2a.max-tasks': 2, 'platform.a2a.task-retention-ms': 1000 })
  t.teardown(tp.close)
  const url = `${tp.url}/platform/agent/demo/a2a`
  const store = tp.platform.area(A2A).tasks
  const alice = { authorization: `Bearer ${ALICE}` }
  const get = async (id: string, headers: Record<string, string> = alice) =>
    (await rpc(url, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }, headers)).body
  const list = async () =>
    (await rpc(url, { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }, alice)).body.result.tasks.map(
      (x: any) => x.id
    )
  const a = (await rpc(url, send('one'))).body.result.task
  const b = (await rpc(url, send('two'), alice)).body.result.task
  t.equal(a.status.state, 'TASK_STATE_COMPLETED')
  const c = (await rpc(url, send('three'), alice)).body.result.task
  t.equal(c.status.state, 'TASK_STATE_COMPLETED', 'at the cap')
  t.match((await get(a.id, {})).error, { code: -32001 }, 'the finished anonymous task made room')
  const d = (await rpc(url, send('four'), alice)).body.result.task
  t.equal(d.status.state, 'TASK_STATE_COMPLETED')
  t.same(await list(), [d.id, c.id], "then the caller's own oldest finished task")
  t.match((await get(b.id)).error, { code: -32001 })
  t.equal(store.size, 2)
  // once the retention has passed, the finished tasks go
  await new Promise((r) => setTimeout(r, 1100))
  t.match((await get(c.id)).error, { code: -32001 })
  const e = (await rpc(url, send('five'), alice)).body.result.task
  t.same(await list(), [e.id], 'the evicted tasks are gone')
  t.equal(store.size, 1)
})

t.test('platform.a2a.enabled=false serves no A2A and lists no badge', async (t) => {
  const tp = await start({ 'platform.a2a.enabled': false })
  t.teardown(tp.close)
  t.equal((await rpc(`${tp.url}/platform/agent/demo/a2a`, send('hi'))).status, 404)
  t.equal((await fetch(`${tp.url}/platform/agent/demo/.well-known/agent-card.json`)).status, 404)
  t.notOk(tp.platform.hasArea(A2A))
  t.notOk(
    tp.platform
      .area(AI)
      .agents()
      .find((x) => x.name === 'demo')
      ?.protocols.includes('a2a')
  )
})

t.test('an agent at a path of its own, a hot-loaded one, and the host root card', async (t) => {
  const tp = await start({ 'platform.a2a.root-agent': 'helper' })
  t.teardown(tp.close)
  const root = await fetch(`${tp.url}/.well-known/agent-card.json`)
  t.equal(root.status, 404, 'the named root agent is not loaded yet')
  t.match(await root.json(), {
    error:
      "No agent card at the host's root: platform.a2a.root-agent names 'helper', which no loaded plugin contributes",
    code: 'PLT_ERR_A2A_NO_ROOT_AGENT',
    hint: /platform\.a2a\.root-agent/
  })
  addHelperAgent(tp)
  t.ok(await until(() => tp.platform.area(A2A).pathOf('helper') !== undefined), 'mounted as it loads')
  t.equal(tp.platform.area(A2A).pathOf('helper'), '/helper/a2a')
  const card = await (await fetch(`${tp.url}/.well-known/agent-card.json`)).json()
  t.match(card, { name: 'helper', version: '2.0.0', supportedInterfaces: [{ url: `${tp.url}/helper/a2a` }] })
  t.same(await (await fetch(`${tp.url}/helper/a2a/.well-known/agent-card.json`)).json(), card)
  const res = await rpc(`${tp.url}/helper/a2a`, send('hello helper'))
  t.match(res.body.result.task, { status: { state: 'TASK_STATE_COMPLETED' } })
  t.equal((await tp.platform.area(A2A).tasks.get(res.body.result.task.id))?.agent, 'helper')
})

t.test('a message a policy denies makes a REJECTED task saying why', async (t) => {
  const tp = await governedAdminPlatform()
  t.teardown(tp.close)
  const res = await rpc(`${tp.url}/platform/agent/demo/a2a`, send('tell me the launch codes'))
  const task = res.body.result.task
  t.equal(task.status.state, 'TASK_STATE_REJECTED')
  t.match(task.status.message, { role: 'ROLE_AGENT', parts: [{ text: /denied by policy no-launch-codes/ }] })
  t.notOk('artifacts' in task && task.artifacts.length > 0, 'no answer')
  const decisions = await call(tp, 'GET', '/governance/decisions?limit=5', { token: ALICE })
  t.ok(
    (decisions.body as any[]).some((d) => d.policy_name === 'no-launch-codes' && d.decision === 'deny'),
    'the decision log has the denial'
  )
})

t.test('a platform shutting down cancels running tasks and answers their waiting callers', async (t) => {
  const fake = await new OpenAiServer().start()
  t.teardown(() => fake.close())
  fake.chat = () => ({
    stream: openAiSse(Array.from({ length: 200 }, () => deltaChunk({ content: 'x ' }))),
    intervalMs: 50
  })
  const tp = await start({
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': fake.url,
    'platform.ai.openai.model': 'test-model'
  })
  const ai = tp.platform.area(AI)
  const waiting = rpc(`${tp.url}/platform/agent/demo/a2a`, send('talk'))
  t.ok(await until(() => ai.inFlight() === 1), 'the turn runs')
  const cut = Date.now()
  await tp.close()
  t.ok(Date.now() - cut < 3000, `closed in ${Date.now() - cut} ms, not after the 10 s stream`)
  t.equal(ai.inFlight(), 0)
  const res = await waiting
  t.equal(res.body.result.task.status.state, 'TASK_STATE_CANCELED', 'the waiting caller got the canceled task')
})
