// Hostile-client corpus, A2A: anonymous tasks at the cap cannot lock out authenticated principals,
// one caller is held to its own quota, an oversized message makes no task, and an anonymous
// caller can neither list nor read another anonymous caller's task or conversation.
import t, { type Test } from 'tap'
import { A2A } from '../../runtime/a2a/key.js'
import { OpenAiServer, deltaChunk, sseEvents, type Reply } from '../helpers/openai-server.js'
import { definePlugin, agent } from 'uws-agent-platform/sdk'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import type { Manifest } from '../../runtime/plugins/index.js'
import { adminPlatform, call as adminCall } from '../admin/helpers.js'
import { call } from './mcp-clients.js'

const ALICE = 'alice-a2a-token-0123456789'
const TOKENS = { 'platform.auth.tokens': [{ token: ALICE, principal: 'alice', roles: [] }] }
const AS_ALICE = { authorization: `Bearer ${ALICE}` }

const MANIFEST: Manifest = {
  name: 'probe',
  version: '1.0.0',
  entry: 'index.js',
  sandbox: 'inline',
  permissions: { net: [], kv: false, env: [] },
  limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 1 }
}

let n = 0
const send = (text: string, extra: Record<string, unknown> = {}, message: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: ++n,
  method: 'SendMessage',
  params: { message: { messageId: `m-${n}`, role: 'ROLE_USER', parts: [{ text }], ...message }, ...extra }
})
const rpcCall = (method: string, params: unknown) => ({ jsonrpc: '2.0', id: ++n, method, params })
/** Answers at once with the task still running. */
const NOW = { configuration: { returnImmediately: true } }

/** A model that never answers a message containing `hang` and answers `ok` to anything else. */
async function model(t: Test): Promise<OpenAiServer> {
  const fake = await new OpenAiServer().start()
  t.teardown(() => fake.close())
  fake.chat = (body: any): Reply =>
    JSON.stringify(body?.messages ?? []).includes('hang')
      ? { hang: true }
      : { stream: sseEvents([deltaChunk({ content: 'ok' }, 'stop')]) }
  return fake
}

async function platform(t: Test, fake: OpenAiServer, config: Record<string, unknown>) {
  const tp = await adminPlatform({
    ...TOKENS,
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': fake.url,
    'platform.ai.openai.model': 'test-model',
    // every hanging turn holds a model request: the runtime's own bound is not what is tested
    'platform.ai.openai.max-concurrency': 64,
    ...config
  })
  t.teardown(tp.close)
  // an inline agent: nothing to load from disk, so nothing a loaded machine can be late with
  const plugin = definePlugin({ agents: [agent({ name: 'probe', description: 'answers' })] })
  tp.platform.plugins.set('/plugins/probe', MANIFEST, inlineInstance(plugin, { log: tp.platform.logger }))
  return { tp, url: `${tp.url}/platform/agent/probe/a2a`, store: tp.platform.area(A2A).tasks }
}

t.test('running anonymous tasks from many addresses cannot take the reserve kept for principals', async (t) => {
  const fake = await model(t)
  const { url, store } = await platform(t, fake, {
    'platform.a2a.max-tasks': 10,
    'platform.a2a.tasks.authenticated-reserve': 4
  })
  const answers = []
  for (let i = 0; i < 8; i++) answers.push(await call(url, { body: send('hang', NOW), from: `127.0.4.${i + 1}` }))
  t.equal(answers.filter((a) => a.body.result !== undefined).length, 6, 'the anonymous pool is 10 - 4')
  const refused = answers.at(-1)!
  t.equal(refused.status, 503)
  t.equal(refused.body.error.code, -32603)
  t.match(refused.body.error.message, /anonymous A2A tasks.*platform\.a2a\.tasks\.authenticated-reserve/)
  t.match(refused.body.error.data[0].metadata, { limit: '6', key: 'platform.a2a.tasks.authenticated-reserve' })
  t.equal(store.size, 6, 'a refusal creates no task')
  for (let i = 0; i < 4; i++) {
    const r = await call(url, { body: send('hang', NOW), headers: AS_ALICE, from: '127.0.4.1' })
    t.equal(r.body.result?.task.status.state, 'TASK_STATE_WORKING', `alice ${i + 1}, from a busy address too`)
  }
  const full = await call(url, { body: send('hang', NOW), headers: AS_ALICE })
  t.equal(full.status, 503, 'at the cap with nothing finished to forget')
  t.match(full.body.error.message, /server holds its limit of 10 tasks/)
  t.equal(store.size, 10)
})

t.test('one caller is held to its own quota while its tasks run; finished ones make room', async (t) => {
  const fake = await model(t)
  const { url, store } = await platform(t, fake, {
    'platform.a2a.tasks.max-per-address': 2,
    'platform.a2a.tasks.max-per-principal': 2
  })
  const from = '127.0.5.1'
  for (let i = 0; i < 2; i++) t.ok((await call(url, { body: send('hang', NOW), from })).body.result)
  const over = await call(url, { body: send('hang', NOW), from })
  t.equal(over.status, 429)
  t.equal(over.body.error.code, -32603)
  t.match(over.body.error.message, /anonymous callers at 127\.0\.5\.1: all 2 of its tasks are still running/)
  t.match(over.body.error.data[0].metadata, { limit: '2', key: 'platform.a2a.tasks.max-per-address' })
  t.ok((await call(url, { body: send('hang', NOW), from: '127.0.5.2' })).body.result, 'another address is untouched')
  t.equal(store.size, 3)

  // finished tasks never lock their caller out for the retention: the oldest goes for the next
  const done = []
  for (let i = 0; i < 4; i++) {
    const r = await call(url, { body: send(`question ${i}`), headers: AS_ALICE })
    t.equal(r.body.result?.task.status.state, 'TASK_STATE_COMPLETED', `alice ${i + 1}`)
    done.push(r.body.result.task.id as string)
  }
  const read = async (id: string) => (await call(url, { body: rpcCall('GetTask', { id }), headers: AS_ALICE })).body
  t.equal((await read(done[0]!)).error?.code, -32001, 'her oldest finished task made room')
  t.equal((await read(done[3]!)).result?.id, done[3], 'her newest is kept')
  t.equal(store.size, 5, '3 anonymous and alice at her 2')
  for (let i = 0; i < 2; i++) t.ok((await call(url, { body: send('hang', NOW), headers: AS_ALICE })).body.result)
  const aliceOver = await call(url, { body: send('hang', NOW), headers: AS_ALICE })
  t.equal(aliceOver.status, 429, 'with both running she is over')
  t.match(aliceOver.body.error.message, /principal 'alice'/)
})

t.test('a message over the agent endpoint limit is refused before a task exists', async (t) => {
  const fake = await model(t)
  const { url, store } = await platform(t, fake, { 'platform.ai.endpoint.max-message-bytes': 4096 })
  const big = await call(url, { body: send('x'.repeat(1_000_000)) })
  t.equal(big.status, 413)
  t.equal(big.body.error.code, -32600)
  t.match(big.body.error.message, /at most 4096 bytes \(platform\.ai\.endpoint\.max-message-bytes/)
  const near = await call(url, { body: send('x'.repeat(4200)) })
  t.equal(near.status, 413, 'just over the limit too')
  t.equal(store.size, 0, 'no task')
  t.equal(fake.on('/chat/completions').length, 0, 'no turn')
  t.equal((await call(url, { body: send('x'.repeat(3000)) })).body.result?.task.status.state, 'TASK_STATE_COMPLETED')
})

t.test('an anonymous caller cannot list or read another anonymous caller’s task or conversation', async (t) => {
  const fake = await model(t)
  const { tp, url } = await platform(t, fake, {})
  const a = '127.0.6.1'
  const b = '127.0.6.2'
  const mine = (await call(url, { body: send('my secret is 4711', {}, { contextId: 'ctx-1' }), from: a })).body.result
    .task
  t.equal(mine.status.state, 'TASK_STATE_COMPLETED')
  for (const from of [b, a]) {
    const listed = (await call(url, { body: rpcCall('ListTasks', {}), from })).body.result
    t.same([listed.tasks, listed.totalSize], [[], 0], `anonymous ListTasks from ${from} lists nothing`)
    const ctx = (await call(url, { body: rpcCall('ListTasks', { contextId: 'ctx-1' }), from })).body.result
    t.equal(ctx.totalSize, 0, 'not by its context either')
  }
  const own = (await call(url, { body: rpcCall('GetTask', { id: mine.id }), from: a })).body.result
  t.equal(own.id, mine.id, 'the id is the creator’s handle')
  t.equal((await call(url, { body: rpcCall('GetTask', { id: 'x' }), from: b })).body.error.code, -32001)
  // the admin's task list would hand out the ids: it is behind the content gate
  t.equal((await adminCall(tp, 'GET', '/tasks')).status, 401)
  t.equal((await adminCall(tp, 'GET', `/tasks/${mine.id}`)).status, 401)
  t.equal((await adminCall(tp, 'GET', '/tasks', { token: ALICE })).body[0].taskId, mine.id)
  // a context id a client chose is guessable: another address naming it gets none of its history
  fake.reset()
  await call(url, { body: send('what was my secret?', {}, { contextId: 'ctx-1' }), from: b })
  const asked = JSON.stringify(fake.on('/chat/completions'))
  t.match(asked, /what was my secret/)
  t.notMatch(asked, /4711/, 'the other address’s turn sees no earlier turn of that context')
  const alice = (await call(url, { body: send('hello'), headers: AS_ALICE })).body.result.task
  t.equal((await call(url, { body: rpcCall('GetTask', { id: alice.id }), from: b })).body.error.code, -32001)
  t.equal((await call(url, { body: rpcCall('GetTask', { id: mine.id }), headers: AS_ALICE })).body.error.code, -32001)
})
