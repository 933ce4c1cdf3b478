// A2A tasks and MCP sessions across the nodes of a cluster: two platforms in this process on one
// Postgres database and one redis-server, no sticky sessions.
import t, { type Test } from 'tap'
import { Client } from 'pg'
import { TaskState } from '@a2a-js/sdk'
import { getMcp } from '../../runtime/mcp/index.js'
import { AI } from '../../runtime/ai/index.js'
import { PostgresTaskRecords } from '../../runtime/a2a/postgres-task-records.js'
import { PostgresTasks } from '../../runtime/mcp/postgres-tasks.js'
import { PostgresDb } from '../../runtime/store/index.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { within } from '../helpers/within.js'
import { testPostgres } from '../helpers/postgres.js'
import { testRedis } from '../helpers/redis.js'
import { clientFor, rpc, start, textOf, until } from '../a2a/a2a-helpers.js'
import { ACCEPT_BOTH, modern, openSession } from '../mcp/helpers.js'

const ALICE = 'alice-token-0123456789'
const BOB = 'bob-token-0123456789'

const pg = await testPostgres(t)
const redis = pg === undefined ? undefined : await testRedis(t)
const model = redis === undefined ? undefined : await new OpenAiServer().start()
if (model !== undefined) t.teardown(() => model.close())

/** Turns of `deltas` text deltas, each held before delta `pause` until `release()` (or the test's end). */
/**
 * Holds a session's MCP GET stream on `url` and reads it until `found` returns something (the
 * stream ending first gives `found` the whole text with `ended` set).
 */
async function getStream<T>(
  t: Test,
  url: string,
  headers: Record<string, string>,
  found: (text: string, ended: boolean) => T | undefined
): Promise<{ read: Promise<T> }> {
  const ac = new AbortController()
  t.teardown(() => ac.abort())
  const get = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: ac.signal })
  t.equal(get.status, 200)
  const reader = get.body!.getReader()
  const read = (async () => {
    let buf = ''
    for (;;) {
      const r = await reader.read()
      if (!r.done) buf += new TextDecoder().decode(r.value)
      const v = found(buf, r.done)
      if (v !== undefined) return v
      if (r.done) throw new Error('the GET stream ended')
    }
  })()
  return { read }
}

function hold(t: Test, deltas: number, pause: number): { release: () => void } {
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  t.teardown(release)
  model!.chat = () => ({
    stream: sseEvents([
      ...Array.from({ length: deltas }, (_, i) => deltaChunk({ content: `d${i} ` })),
      deltaChunk({}, 'stop')
    ]),
    pauseAt: { index: pause, until: held }
  })
  return { release }
}

const send = (text: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: {
    message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] },
    configuration: { returnImmediately: true }
  }
})
const byId = (method: string, id: string) => ({ jsonrpc: '2.0', id: 2, method, params: { id } })
const as = (token: string) => ({ authorization: `Bearer ${token}` })

if (pg !== undefined && redis !== undefined && model !== undefined) {
  const url = await pg.database(t)
  const config = {
    'platform.cluster.enabled': true,
    'platform.cluster.redis-url': redis.url,
    'platform.postgres.url': url,
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model',
    'platform.auth.tokens': [
      { token: ALICE, principal: 'alice' },
      { token: BOB, principal: 'bob' }
    ]
  }
  const a = await start(config)
  t.teardown(a.close)
  const b = await start(config)
  t.teardown(b.close)
  const a2a = (base: string): string => `${base}/platform/agent/demo/a2a`

  t.test('an A2A task created on node A is read, listed, followed and canceled on node B', async (t) => {
    hold(t, 20, 3)
    const sent = await rpc(a2a(a.url), send('long job'), as(ALICE))
    const id = sent.body.result.task.id as string
    await until(() => a.platform.area(AI).inFlight() === 1)
    const got = await rpc(a2a(b.url), byId('GetTask', id), as(ALICE))
    t.equal(got.body.result.id, id, 'B reads the task A runs')
    t.equal(got.body.result.status.state, 'TASK_STATE_WORKING')
    t.equal((await rpc(a2a(b.url), byId('GetTask', id), as(BOB))).body.error?.code, -32001, "not bob's")
    const listed = await rpc(a2a(b.url), { jsonrpc: '2.0', id: 3, method: 'ListTasks', params: {} }, as(ALICE))
    t.ok(
      listed.body.result.tasks.some((x: { id: string }) => x.id === id),
      'B lists it'
    )
    // a stream on B: the task first, then what A says of it, to the end
    const client = await clientFor(b.url, 'demo', ALICE)
    const stream = client.resubscribeTask({ id, tenant: '' })
    const first: any = (await stream.next()).value
    t.equal(first.payload.value.id, id, 'the stream on B starts with the task')
    const canceled = await rpc(a2a(b.url), byId('CancelTask', id), as(ALICE))
    t.equal(canceled.body.result.status.state, 'TASK_STATE_CANCELED', 'B cancels it')
    let last: any
    await within(
      (async () => {
        for await (const e of stream) last = e
      })(),
      "the stream on B ends with the task's end"
    )
    t.equal(last.payload.value.status.state, TaskState.TASK_STATE_CANCELED, 'the last event: CANCELED')
    await within(
      until(() => a.platform.area(AI).inFlight() === 0, 30_000),
      "A's turn stops on B's cancel"
    )
    t.equal((await rpc(a2a(a.url), byId('GetTask', id), as(ALICE))).body.result.status.state, 'TASK_STATE_CANCELED')
    const again = await rpc(a2a(b.url), byId('CancelTask', id), as(ALICE))
    t.equal(again.body.error?.code, -32002, 'an ended task is not canceled twice')
    const c = new Client({ connectionString: url })
    await c.connect()
    t.teardown(() => c.end())
    const row = await c.query('SELECT state, node FROM platform_a2a_tasks WHERE id = $1', [id])
    t.same(row.rows, [{ state: 'TASK_STATE_CANCELED', node: a.platform.node.id }], 'kept in Postgres, run by A')
  })

  t.test('an A2A task of a lost node ends FAILED once, and its streams on the other nodes end', async (t) => {
    // the lost node: a task store of its own on the database that never renews its lease, as a node
    // killed with kill -9 mid-task leaves it (no shutdown, no new process needed)
    const pool = await PostgresDb.open({ url, poolSize: 1 })
    t.teardown(() => pool.close())
    const gone = new PostgresTaskRecords({
      node: 'node-gone',
      // long enough for both streams to open before it lapses (a stream of an ended task is refused)
      leaseMs: 2000,
      limits: { max: 100, perPrincipal: 100, perAddress: 100, reserve: 0 },
      retentionMs: 300_000,
      push: { perTask: 1, perCaller: 1 },
      db: async () => pool
    })
    await gone.start()
    const now = Date.now()
    const [id, contextId] = [`task-lost-${now}`, `ctx-lost-${now}`]
    const rec = await gone.create(
      {
        id,
        contextId,
        agent: 'demo',
        owner: 'alice',
        caller: { principal: 'alice' },
        node: 'node-gone',
        createdAt: now,
        state: 'TASK_STATE_SUBMITTED',
        updatedAt: now,
        history: [{ messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text: 'doomed' }], taskId: id, contextId }],
        artifacts: [],
        metadata: {},
        push: []
      },
      now
    )
    await gone.update({ ...rec, state: 'TASK_STATE_WORKING', updatedAt: now })
    const changes: unknown[] = []
    for (const node of [a, b]) {
      const off = node.platform.bus.on('TaskStateChanged', (e) => {
        if (e.taskId === id) changes.push({ oldState: e.oldState, newState: e.newState })
      })
      t.teardown(off)
    }
    // a stream on each node: whichever node ends the task, both hear it and end
    const streams = await Promise.all(
      [a, b].map(async (n) => (await clientFor(n.url, 'demo', ALICE)).resubscribeTask({ id, tenant: '' }))
    )
    const lasts = await within(
      Promise.all(
        streams.map(async (stream) => {
          let last: any
          for await (const e of stream) last = e
          return last
        })
      ),
      "both streams end with the task's end"
    )
    for (const last of lasts) {
      t.equal(last.payload.value.status.state, TaskState.TASK_STATE_FAILED, 'the last event: FAILED')
      t.equal(textOf(last.payload.value.status.message), 'interrupted: node lost')
    }
    const got = (await rpc(a2a(b.url), byId('GetTask', id), as(ALICE))).body.result
    t.equal(got.status.state, 'TASK_STATE_FAILED')
    t.equal(got.status.message.parts[0].text, 'interrupted: node lost', 'the status says the node was lost')
    t.same(
      changes,
      [{ oldState: 'TASK_STATE_WORKING', newState: 'TASK_STATE_FAILED' }],
      'ended once, by one of the nodes'
    )
    const late = await gone.update({ ...rec, state: 'TASK_STATE_COMPLETED', updatedAt: Date.now() })
    t.equal(late?.written, false, "the lost node's late write is refused")
    await gone.stop()
  })

  t.test('a 2025-11-25 MCP task of a lost node ends failed once, and tasks/result and tasks/get say so', async (t) => {
    // the lost node: a task store of its own on the database that never renews its lease, as a node
    // killed mid-task leaves it
    const pool = await PostgresDb.open({ url, poolSize: 1 })
    t.teardown(() => pool.close())
    const gone = new PostgresTasks({ node: 'node-gone', leaseMs: 1000, db: async () => pool })
    await gone.start()
    const at = new Date().toISOString()
    const rec = {
      id: `task-lost-mcp-${Date.now()}`,
      status: 'working' as const,
      createdAt: at,
      lastUpdatedAt: at,
      ttlMs: 60_000,
      pollIntervalMs: 50,
      principal: null
    }
    t.ok(await gone.put(rec), 'the lost node hands the task out')
    const changes: unknown[] = []
    for (const node of [a, b]) {
      const off = node.platform.bus.on('TaskStateChanged', (e) => {
        if (e.taskId === rec.id) changes.push({ oldState: e.oldState, newState: e.newState })
      })
      t.teardown(off)
    }
    const onA = await openSession(`${a.url}/platform/mcp`)
    const result = await within(onA.call('tasks/result', { taskId: rec.id }), "the task's end on A")
    t.equal(result.body.error?.code, -32603, 'tasks/result answers the failure')
    t.match(result.body.error?.message, /interrupted: node lost/)
    const onB = await openSession(`${b.url}/platform/mcp`)
    const got = (await onB.call('tasks/get', { taskId: rec.id })).body.result
    t.equal(got.status, 'failed', 'B reads it failed')
    t.equal(got.statusMessage, 'interrupted: node lost', 'the status says the node was lost')
    await within(
      until(() => changes.length > 0),
      'the end told on the bus'
    )
    t.same(changes, [{ oldState: 'working', newState: 'failed' }], 'ended once, by one of the nodes')
    t.equal(
      await gone.put({ ...rec, status: 'completed', lastUpdatedAt: new Date().toISOString() }),
      false,
      "the lost node's late write is refused"
    )
    t.same(await gone.renew([rec.id]), [rec.id], 'and so is its renewal')
    await gone.stop()
  })

  t.test('a task finished on node A is read on node B with its answer', async (t) => {
    hold(t, 3, 99).release()
    const sent = await rpc(
      a2a(a.url),
      { ...send('short job'), params: { ...send('short job').params, configuration: {} } },
      as(ALICE)
    )
    t.equal(sent.body.result.task.status.state, 'TASK_STATE_COMPLETED')
    const got = await rpc(a2a(b.url), byId('GetTask', sent.body.result.task.id), as(ALICE))
    t.equal(got.body.result.status.state, 'TASK_STATE_COMPLETED')
    t.match(got.body.result.artifacts[0].parts[0].text, /d0 d1 d2/, 'the answer is kept with the task')
  })

  t.test('an MCP task handed out on node A is read and cancelled on node B', async (t) => {
    const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } }
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    t.teardown(release)
    for (const node of [a, b])
      getMcp(node.platform)!.registerTool({
        name: 'slow',
        description: 'Waits for the test',
        longRunning: true,
        taskSupport: 'optional',
        handler: async () => {
          await held
          return 'done'
        }
      })
    const mcpOf = (base: string): string => `${base}/platform/mcp`
    const handed = (await modern(mcpOf(a.url), 'tools/call', { name: 'slow', arguments: {} }, { caps: TASKS })).body
      .result
    t.equal(handed.resultType, 'task')
    const onB = (await modern(mcpOf(b.url), 'tasks/get', { taskId: handed.taskId }, { caps: TASKS })).body.result
    t.equal(onB.status, 'working', 'B reads the task A runs')
    const cancel = await modern(mcpOf(b.url), 'tasks/cancel', { taskId: handed.taskId }, { caps: TASKS })
    t.equal(cancel.status, 200)
    const readOnB = (await modern(mcpOf(b.url), 'tasks/get', { taskId: handed.taskId }, { caps: TASKS })).body.result
    t.equal(readOnB.status, 'cancelled', 'cancelled in the store at once')
    let onA: any
    await within(
      (async () => {
        while (
          (onA = (await modern(mcpOf(a.url), 'tasks/get', { taskId: handed.taskId }, { caps: TASKS })).body.result)
            .status !== 'cancelled'
        )
          await new Promise((r) => setTimeout(r, 20))
      })(),
      'A learns of the cancel'
    )
    t.equal(onA.status, 'cancelled')
    release()
  })

  t.test(
    "a 2025-11-25 task's elicitation goes out on another node's GET stream, its answer back to the task's node",
    async (t) => {
      for (const node of [a, b])
        getMcp(node.platform)!.registerTool({
          name: 'ask_name',
          description: 'Asks the user for a name',
          longRunning: true,
          taskSupport: 'optional',
          handler: (_args, ctx) => {
            const name: any = ctx.inputResponses?.name
            if (name !== undefined) return `hello ${String(name.content?.name)}`
            const params = {
              mode: 'form',
              message: 'Your name?',
              requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }
            }
            return { resultType: 'input_required', inputRequests: { name: { method: 'elicitation/create', params } } }
          }
        })
      const onA = await openSession(`${a.url}/platform/mcp`, '2025-11-25', { elicitation: {} })
      const headers = {
        'content-type': 'application/json',
        accept: ACCEPT_BOTH,
        'mcp-session-id': onA.sid,
        'mcp-protocol-version': onA.init.result.protocolVersion
      }
      // the session's GET stream is held by B; the task will run on A
      const { read: asked } = await getStream(t, `${b.url}/platform/mcp`, headers, (buf) => {
        const line = buf.split('\n').find((l) => l.startsWith('data: ') && l.includes('elicitation/create'))
        return line === undefined ? undefined : JSON.parse(line.slice(6))
      })
      const handed = await onA.call('tools/call', { name: 'ask_name', arguments: {}, task: { ttl: 60_000 } })
      const taskId = handed.body.result.task.taskId as string
      const request = await within(asked, "A's elicitation on B's GET stream")
      t.equal(request.method, 'elicitation/create')
      t.match(request.id, new RegExp(`@${a.platform.node.id}$`), "the request's id names the node waiting for it")
      // the answer reaches B (a balancer without affinity): B sends it on to A
      const answered = await fetch(`${b.url}/platform/mcp`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { name: 'Ada' } } })
      })
      t.equal(answered.status, 202)
      const result = await within(onA.call('tasks/result', { taskId }), "the task's result on A")
      t.match(result.body.result.content[0].text, 'hello Ada', 'the task on A went on with the answer given to B')
    }
  )

  t.test('an MCP session opened on node A continues on node B, and hears A', async (t) => {
    for (const node of [a, b])
      getMcp(node.platform)!.registerTool({
        name: 'echo',
        description: 'Echoes',
        handler: (args) => JSON.stringify(args)
      })
    const onA = await openSession(`${a.url}/platform/mcp`)
    const headers = {
      'content-type': 'application/json',
      accept: ACCEPT_BOTH,
      'mcp-session-id': onA.sid,
      'mcp-protocol-version': onA.init.result.protocolVersion
    }
    const call = await fetch(`${b.url}/platform/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'echo', arguments: { x: 1 } }
      })
    })
    t.equal(call.status, 200, 'B knows the session A opened')
    const text = await call.text()
    t.match(text, /"x\\?":1/, 'and calls the tool in it')
    // B holds the session's GET stream; a tool registered on A only changes A's list
    const { read: heard } = await getStream(t, `${b.url}/platform/mcp`, headers, (buf, ended) =>
      ended || buf.includes('notifications/tools/list_changed') ? buf : undefined
    )
    // the stream is open on B before A raises the change: B's node holds the subscription already
    await new Promise((r) => setImmediate(r))
    getMcp(a.platform)!.registerTool({ name: 'only_on_a', description: 'A alone', handler: () => 'a' })
    t.match(await within(heard, "A's notification on B's GET stream"), /tools\/list_changed/)
    const del = await fetch(`${b.url}/platform/mcp`, { method: 'DELETE', headers })
    t.equal(del.status, 204, 'ended on B')
    // A hears of the end once the delete is committed (the backplane's ended message)
    let status = 0
    await within(
      (async () => {
        while ((status = (await onA.call('tools/list')).status) !== 404) await new Promise((r) => setTimeout(r, 20))
      })(),
      'the session gone on A too'
    )
    t.equal(status, 404, 'and gone on A')
  })
}
