// The A2A endpoint through the official client (@a2a-js/sdk): card discovery, send, stream,
// get, list with paging, cancel, and the A2A errors; the JSON-RPC envelope errors over raw fetch.
import t from 'tap'
import { TaskState } from '@a2a-js/sdk'
import { isJsonRpcError } from '@a2a-js/sdk/errors'
import { AI } from '../../runtime/ai/index.js'
import { A2A } from '../../runtime/a2a/key.js'
import { start, clientFor, textMessage, textOf, collect, rpc } from './a2a-helpers.js'

/** The JSON-RPC code and message of what a client call threw. */
async function rpcError(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p
  } catch (err) {
    if (isJsonRpcError(err)) return { code: err.envelopeCode, message: err.message }
    throw err
  }
  throw new Error('the call succeeded')
}

// a principal: an anonymous caller lists no tasks (it reads each by the id it was given)
const TOKEN = 'a2a-client-token-0123456789'
const AUTH = { authorization: `Bearer ${TOKEN}` }

t.test('the demo agent over A2A with the official client', async (t) => {
  const tp = await start({ 'platform.auth.tokens': [{ token: TOKEN, principal: 'client' }] })
  t.teardown(tp.close)
  const endpoint = `${tp.url}/platform/agent/demo/a2a`
  const client = await clientFor(tp.url, 'demo', TOKEN)

  t.test('the Agent Card names the real endpoint and what the agent offers', async (t) => {
    const res = await fetch(`${tp.url}/platform/agent/demo/.well-known/agent-card.json`)
    t.equal(res.status, 200)
    t.match(res.headers.get('cache-control'), /max-age=\d+/)
    const etag = res.headers.get('etag')!
    t.match(etag, /^".+"$/)
    const again = await fetch(`${tp.url}/platform/agent/demo/.well-known/agent-card.json`, {
      headers: { 'if-none-match': etag }
    })
    t.equal(again.status, 304, 'unchanged: not sent again')
    const card = await res.json()
    t.match(card, {
      name: 'demo',
      description: String,
      version: '1.0.0',
      supportedInterfaces: [{ url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'demo', name: 'demo', description: String, tags: Array }],
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } }
    })
    // the same card under the endpoint, for a client given `{endpoint}/` as its base
    t.same(await (await fetch(`${endpoint}/.well-known/agent-card.json`)).json(), card)
    t.same((await client.getAgentCard()).supportedInterfaces[0]?.url, endpoint)
    const unknown = await fetch(`${tp.url}/platform/agent/nobody/.well-known/agent-card.json`)
    t.equal(unknown.status, 404)
    t.match(await unknown.json(), { code: 'PLT_ERR_AGENT_NOT_FOUND' })
  })

  t.test('SendMessage runs one governed turn and answers the completed task', async (t) => {
    const task: any = await client.sendMessage(textMessage('How do sandboxes work?'))
    t.equal(task.status.state, TaskState.TASK_STATE_COMPLETED)
    t.match(task.id, /^[0-9a-f-]{36}$/)
    t.match(task.contextId, /^[0-9a-f-]{36}$/)
    t.equal(task.artifacts.length, 1)
    t.match(textOf(task.artifacts[0]), /According to platform_fact: .*isolate/, 'the agent used its tool')
    t.equal(task.history.length, 2, 'the user message and the answer')
    t.equal(textOf(task.history[0]), 'How do sandboxes work?')
    t.equal(textOf(task.history[1]), textOf(task.artifacts[0]))
    t.equal(tp.platform.area(AI).inFlight(), 0)
  })

  t.test('SendStreamingMessage streams the task, the text as it comes, and the final state', async (t) => {
    const events: any[] = await collect(client.sendMessageStream(textMessage('Tell me about rooms')))
    t.equal(events[0].payload.$case, 'task', 'the task first')
    const id = events[0].payload.value.id
    const updates = events.slice(1).map((e) => e.payload)
    const chunks = updates.filter((p) => p.$case === 'artifactUpdate').map((p) => p.value)
    t.ok(chunks.length > 2, `the text streamed in ${chunks.length} chunks`)
    t.notOk(chunks[0].append, 'the first chunk starts the artifact')
    t.ok(
      chunks.slice(1, -1).every((c: any) => c.append && !c.lastChunk),
      'the next ones append'
    )
    const last = chunks.at(-1)
    t.ok(last.lastChunk, 'the last one is marked')
    t.equal(
      chunks
        .slice(0, -1)
        .map((c: any) => textOf(c.artifact))
        .join(''),
      textOf(last.artifact),
      'the streamed text is the final text'
    )
    const end = updates.at(-1)
    t.equal(end.$case, 'statusUpdate', 'a status update ends the stream')
    t.equal(end.value.status.state, TaskState.TASK_STATE_COMPLETED)
    t.equal(end.value.taskId, id)
    const got: any = await client.getTask({ id, tenant: '' })
    t.equal(got.status.state, TaskState.TASK_STATE_COMPLETED)
    t.equal(textOf(got.artifacts[0]), textOf(last.artifact))
    t.equal((await client.getTask({ id, tenant: '', historyLength: 0 })).history.length, 0, 'historyLength 0')
    t.equal((await client.getTask({ id, tenant: '', historyLength: 1 })).history.length, 1, 'historyLength 1')
  })

  t.test('a follow-up in the same context sees the conversation so far', async (t) => {
    const first: any = await client.sendMessage(textMessage('What are rooms?'))
    const second: any = await client.sendMessage(textMessage('And sandboxes?', { contextId: first.contextId }))
    t.equal(second.contextId, first.contextId)
    t.not(second.id, first.id, 'a new task in the context')
    t.equal(second.status.state, TaskState.TASK_STATE_COMPLETED)
    // a message naming a finished task is refused: it accepts no further messages
    const e = await rpcError(client.sendMessage(textMessage('more', { taskId: first.id })))
    t.equal(e.code, -32004)
    t.match(e.message, `Task ${first.id} is in a terminal state`)
  })

  t.test('ListTasks pages newest first with an opaque token', async (t) => {
    const ctx = (await client.sendMessage(textMessage('one'))).contextId as string
    const ids: string[] = []
    for (const w of ['one', 'two', 'three']) {
      const task: any = await client.sendMessage(textMessage(w, { contextId: ctx }))
      ids.unshift(task.id)
    }
    const page1 = await client.listTasks({ tenant: '', contextId: ctx, status: 0, pageToken: '', pageSize: 2 } as any)
    t.equal(page1.totalSize, 4)
    t.equal(page1.pageSize, 2)
    t.same(
      page1.tasks.map((x) => x.id),
      ids.slice(0, 2),
      'the most recently updated first'
    )
    t.not(page1.nextPageToken, '')
    t.same(page1.tasks[0]!.artifacts, [], 'artifacts left out unless asked for')
    const page2 = await client.listTasks({
      tenant: '',
      contextId: ctx,
      status: 0,
      pageToken: page1.nextPageToken,
      pageSize: 2
    } as any)
    t.equal(page2.tasks.length, 2)
    t.equal(page2.tasks[0]!.id, ids[2])
    t.equal(page2.nextPageToken, '', 'the last page says so')
    const all = await client.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '' } as any)
    t.equal(all.pageSize, 50, 'page size 50 by default')
    const done = await client.listTasks({
      tenant: '',
      contextId: ctx,
      status: TaskState.TASK_STATE_COMPLETED,
      pageToken: '',
      includeArtifacts: true
    } as any)
    t.equal(done.totalSize, 4)
    t.ok(
      done.tasks.every((x) => x.artifacts.length === 1),
      'with artifacts when asked'
    )
    const big = await rpcError(
      client.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', pageSize: 101 } as any)
    )
    t.equal(big.code, -32602)
    t.match(big.message, /pageSize must be an integer from 1 to 100, got 101/)
    const bad = await rpcError(client.listTasks({ tenant: '', contextId: '', status: 0, pageToken: 'nope' } as any))
    t.equal(bad.code, -32602)
  })

  t.test('unknown tasks, finished tasks, push configs and the extended card', async (t) => {
    const unknown = await rpcError(client.getTask({ id: 'no-such-task', tenant: '' }))
    t.same(unknown, { code: -32001, message: 'Unknown task: no-such-task' })
    t.same(await rpcError(client.cancelTask({ id: 'no-such-task', tenant: '', metadata: undefined })), {
      code: -32001,
      message: 'Unknown task: no-such-task'
    })
    const done: any = await client.sendMessage(textMessage('hi'))
    t.same(await rpcError(client.cancelTask({ id: done.id, tenant: '', metadata: undefined })), {
      code: -32002,
      message: `Task not cancelable: ${done.id}`
    })
    const sub = await rpcError(collect(client.resubscribeTask({ id: done.id, tenant: '' })))
    t.equal(sub.code, -32004, 'nothing to subscribe to on a terminal task')
    // the client refuses these itself (the card says no); the server answers them all the same
    const push = await rpc(endpoint, {
      jsonrpc: '2.0',
      id: 1,
      method: 'GetTaskPushNotificationConfig',
      params: { taskId: done.id, id: 'x' }
    })
    t.match(push.body.error, { code: -32003, message: 'Push notifications are not supported by this agent' })
    const set = await rpc(endpoint, { jsonrpc: '2.0', id: 2, method: 'tasks/pushNotificationConfig/set', params: {} })
    t.match(set.body.error, { code: -32003 })
    const ext = await rpc(endpoint, { jsonrpc: '2.0', id: 3, method: 'GetExtendedAgentCard' })
    t.match(ext.body.error, { code: -32004, message: /no extended agent card/ })
  })

  t.test('JSON-RPC envelope errors over raw HTTP, each changing nothing', async (t) => {
    const before = tp.platform.area(A2A).tasks.size
    const parse = await rpc(endpoint, '{"jsonrpc":')
    t.equal(parse.status, 200)
    t.match(parse.body, { jsonrpc: '2.0', id: null, error: { code: -32700, message: /^Invalid JSON payload/ } })
    t.match((await rpc(endpoint, [{ jsonrpc: '2.0', id: 1, method: 'GetTask' }])).body.error, { code: -32600 })
    t.match((await rpc(endpoint, { jsonrpc: '1.0', id: 1, method: 'GetTask' })).body.error, { code: -32600 })
    t.match((await rpc(endpoint, { jsonrpc: '2.0', method: 'GetTask', params: { id: 'x' } })).body.error, {
      code: -32600
    })
    t.match(await rpc(endpoint, { jsonrpc: '2.0', id: 7, method: 'Nope' }), {
      body: { id: 7, error: { code: -32601, message: 'Method not found: Nope' } }
    })
    const noParts = await rpc(endpoint, {
      jsonrpc: '2.0',
      id: 'a',
      method: 'SendMessage',
      params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [] } }
    })
    t.match(noParts.body, {
      id: 'a',
      error: {
        code: -32602,
        message: 'Invalid params: message.parts must hold at least 1 item',
        data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'INVALID_PARAMS' }]
      }
    })
    const role = await rpc(endpoint, {
      jsonrpc: '2.0',
      id: 2,
      method: 'SendMessage',
      params: { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x' }] } }
    })
    t.match(role.body.error, {
      code: -32602,
      message: 'Invalid params: message.role must be one of ROLE_USER, user, got "ROLE_AGENT"'
    })
    const file = await rpc(endpoint, {
      jsonrpc: '2.0',
      id: 8,
      method: 'SendMessage',
      params: {
        message: { messageId: 'm', role: 'ROLE_USER', parts: [{ url: 'https://x/y.png', mediaType: 'image/png' }] }
      }
    })
    t.match(file.body.error, { code: -32005, message: /text parts only/ })
    const modes = await rpc(endpoint, {
      jsonrpc: '2.0',
      id: 9,
      method: 'SendMessage',
      params: {
        message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
        configuration: { acceptedOutputModes: ['image/png'] }
      }
    })
    t.match(modes.body.error, { code: -32005, message: /leaves out/ })
    // the params are checked before the task is looked up: a bad one is -32602 even for an unknown id
    const cancel = await rpc(endpoint, {
      jsonrpc: '2.0',
      id: 10,
      method: 'CancelTask',
      params: { id: 'zzz', metadata: 'why' }
    })
    t.match(cancel.body.error, { code: -32602, message: 'Invalid params: metadata must be an object' })
    const subscribe = await rpc(endpoint, { jsonrpc: '2.0', id: 11, method: 'SubscribeToTask', params: { id: 5 } })
    t.match(subscribe.body.error, {
      code: -32602,
      message: 'Invalid params: id must be a string of 1 to 128 characters'
    })
    const version = await rpc(
      endpoint,
      { jsonrpc: '2.0', id: 3, method: 'ListTasks', params: {} },
      { 'a2a-version': '0.5' }
    )
    t.match(version.body.error, { code: -32009, message: 'A2A version 0.5 is not supported (supported: 1.0, 0.3)' })
    t.equal(tp.platform.area(A2A).tasks.size, before, 'no task was created')
    // the 0.3 slash names answer as their 1.0 methods
    const listed = await rpc(endpoint, { jsonrpc: '2.0', id: 4, method: 'tasks/list', params: { pageSize: 1 } }, AUTH)
    t.match(listed.body.result, { pageSize: 1, totalSize: before })
    const got = await rpc(endpoint, { jsonrpc: '2.0', id: 5, method: 'tasks/get', params: { id: 'zzz' } })
    t.match(got.body.error, { code: -32001, message: 'Unknown task: zzz' })
    const other = await rpc(`${tp.url}/platform/agent/nobody/a2a`, { jsonrpc: '2.0', id: 1, method: 'ListTasks' })
    t.equal(other.status, 404)
  })

  t.test("the host's root card: none while several agents are served and none is named", async (t) => {
    const count = tp.platform.plugins.agents().length
    t.ok(count > 1, `${count} agents`)
    const res = await fetch(`${tp.url}/.well-known/agent-card.json`)
    t.equal(res.status, 404)
    t.match(await res.json(), {
      error: `No agent card at the host's root: ${count} agents are served and platform.a2a.root-agent names none of them`,
      code: 'PLT_ERR_A2A_NO_ROOT_AGENT'
    })
    const named = await start({ 'platform.a2a.root-agent': 'demo' })
    t.teardown(named.close)
    t.match(await (await fetch(`${named.url}/.well-known/agent-card.json`)).json(), {
      name: 'demo',
      supportedInterfaces: [{ url: `${named.url}/platform/agent/demo/a2a` }]
    })
  })
})
