// A2A tasks and MCP sessions across the nodes of a cluster: two platforms in this process on one
// Postgres database and one redis-server, no sticky sessions.
import t, { type Test } from 'tap'
import { Client } from 'pg'
import { TaskState } from '@a2a-js/sdk'
import { getMcp } from '../../runtime/mcp/index.js'
import { AI } from '../../runtime/ai/index.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { testPostgres } from '../helpers/postgres.js'
import { testRedis } from '../helpers/redis.js'
import { clientFor, rpc, start, until } from '../a2a/a2a-helpers.js'
import { ACCEPT_BOTH, modern, openSession } from '../mcp/helpers.js'

const ALICE = 'alice-token-0123456789'
const BOB = 'bob-token-0123456789'

/** `p`, or a failure naming what never happened: a hang fails with its reason, not the file's timeout. */
async function within<T>(p: Promise<T>, what: string, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`never happened: ${what}`)), ms)
  })
  try {
    return await Promise.race([p, late])
  } finally {
    clearTimeout(timer)
  }
}

const pg = await testPostgres(t)
const redis = pg === undefined ? undefined : await testRedis(t)
const model = redis === undefined ? undefined : await new OpenAiServer().start()
if (model !== undefined) t.teardown(() => model.close())

/** Turns of `deltas` text deltas, each held before delta `pause` until `release()` (or the test's end). */
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
    const ac = new AbortController()
    t.teardown(() => ac.abort())
    const get = await fetch(`${b.url}/platform/mcp`, {
      headers: { ...headers, accept: 'text/event-stream' },
      signal: ac.signal
    })
    t.equal(get.status, 200)
    const reader = get.body!.getReader()
    const heard = (async () => {
      let buf = ''
      for (;;) {
        const r = await reader.read()
        if (r.done) return buf
        buf += new TextDecoder().decode(r.value)
        if (buf.includes('notifications/tools/list_changed')) return buf
      }
    })()
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
