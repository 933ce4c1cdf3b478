// Operator facts end to end: added through the admin route, carried into the system prompt of the
// user's next turn on the real agent endpoint (the fake OpenAI server records it), removed by id;
// bad input, unknown agents and facts, and the memory sink switched off.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FEEDBACK_HEADING } from '../../runtime/ai/feedback.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { agentSocket, postTurn } from '../ai/agent-clients.js'
import { adminPlatform, addHelperAgent, call, ALICE, BOB, CAROL, WRITER } from './helpers.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const AGENT = '/platform/agent/demo'
const FACT = 'The user is colour-blind: never rely on colour alone.'

const dir = mkdtempSync(join(tmpdir(), 'admin-facts-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const policies = join(dir, 'policies.yaml')
writeFileSync(policies, 'policies:\n  - {name: no-xyzzy, type: deny-list, config: {phrases: [xyzzy]}}\n')

const server = await new OpenAiServer().start()
t.teardown(() => server.close())
server.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'ok' }, 'stop'), usageChunk(3, 1)]) })

const tp = await adminPlatform({
  ...WRITER,
  'platform.plugins.dirs': [join(REPO, 'plugins')],
  'platform.ai.runtime': 'openai',
  'platform.ai.openai.base-url': server.url,
  'platform.ai.openai.model': 'test-model',
  'platform.ai.governance.policy-files': [policies],
  'platform.ai.governance.memory.enabled': true,
  'platform.ai.governance.memory.min-confidence': 0.5
})
t.teardown(tp.close)

/** The system prompt of the last model call. */
const systemPrompt = (): string => String(server.on('/chat/completions').at(-1)?.messages?.[0]?.content ?? '')
const facts = async (query: string) => (await call(tp, 'GET', `/agents/demo/facts?${query}`, { token: BOB })).body

t.test("an operator's fact reaches the user's next turn, on WebSocket and SSE; removed, it is gone", async (t) => {
  const added = await call(tp, 'POST', '/agents/demo/facts?userId=bob', { token: ALICE, body: { content: FACT } })
  t.equal(added.status, 200)
  t.match(added.body, {
    id: /^op-\d+-\d+$/,
    namespace: 'user:bob',
    text: FACT,
    confidence: 1,
    expiresAt: 0,
    provenance: { source: 'operator', principal: 'alice' }
  })
  t.match(tp.platform.audit.entries(1)[0], {
    principal: 'alice',
    action: 'agent_state.fact.add',
    target: 'demo/user:bob',
    success: true
  })
  const listed = await facts('userId=bob')
  t.match(listed, { agentId: 'demo', namespace: 'user:bob', enabled: true })
  t.same(
    listed.facts.map((f: { id: string }) => f.id),
    [added.body.id],
    'GET lists it under the id POST answered'
  )

  // bob's turn (his token makes him the user) carries the fact in the system prompt
  server.reset()
  const s = await agentSocket(tp.url, AGENT, { authorization: `Bearer ${BOB}` })
  t.teardown(() => s.ws.close())
  const frames = await s.turn('hi')
  t.match(frames.at(-1), { event: 'complete' })
  t.match(systemPrompt(), `${FEEDBACK_HEADING}\n- ${FACT}`)
  server.reset()
  const sse = await postTurn(tp.url, AGENT, 'hi again', { authorization: `Bearer ${BOB}` })
  t.match(sse.frames.at(-1), { event: 'complete' })
  t.match(systemPrompt(), `- ${FACT}`, 'a one-shot SSE turn carries it too')
  // another user's turn does not
  server.reset()
  await postTurn(tp.url, AGENT, 'hi', { authorization: `Bearer ${CAROL}` })
  t.notMatch(systemPrompt(), FACT, "carol's turn knows nothing of bob's fact")

  const removed = await call(tp, 'DELETE', `/agents/demo/facts/${added.body.id}?userId=bob`, { token: ALICE })
  t.same([removed.status, removed.body], [200, { removed: added.body.id }])
  t.match(tp.platform.audit.entries(1)[0], {
    principal: 'alice',
    action: 'agent_state.fact.remove',
    target: `demo/user:bob/${added.body.id}`,
    success: true
  })
  t.same((await facts('userId=bob')).facts, [])
  server.reset()
  const after = await s.turn('hi once more')
  t.match(after.at(-1), { event: 'complete' })
  t.notMatch(systemPrompt(), FACT, 'the next turn no longer carries it')
})

t.test("a user's fact is not hidden by the guidance of the conversation's own denies", async (t) => {
  const fact = 'Carol is on call: name the runbook first.'
  const added = await call(tp, 'POST', '/agents/demo/facts?userId=carol', { token: ALICE, body: { content: fact } })
  t.equal(added.status, 200)
  const s = await agentSocket(tp.url, AGENT, { authorization: `Bearer ${CAROL}` })
  t.teardown(() => s.ws.close())
  const denied = await s.turn('say xyzzy')
  t.match(denied.at(-1), { type: 'error' })
  server.reset()
  await s.turn('hi')
  const prompt = systemPrompt()
  t.match(prompt, `${FEEDBACK_HEADING}\n- ${fact}\n- Denied by no-xyzzy`, 'the fact leads, the deny follows')
})

t.test('a session fact, a given confidence', async (t) => {
  const r = await call(tp, 'POST', '/agents/demo/facts?sessionId=s-1', {
    token: ALICE,
    body: { content: '  Likes short answers  ', confidence: 0.6 }
  })
  t.equal(r.status, 200)
  t.match(r.body, { namespace: 'session:s-1', text: 'Likes short answers', confidence: 0.6 })
  t.same(
    (await facts('sessionId=s-1')).facts.map((f: { text: string }) => f.text),
    ['Likes short answers']
  )
  const gone = await call(tp, 'DELETE', `/agents/demo/facts/${r.body.id}?sessionId=s-1`, { token: ALICE })
  t.equal(gone.status, 200)
})

t.test('bad input is 400, unknown agents and facts 404: audited as failed, nothing changes', async (t) => {
  const kept = await call(tp, 'POST', '/agents/demo/facts?userId=dora', { token: ALICE, body: { content: 'kept' } })
  const id = kept.body.id as string
  const cases: [string, string, unknown, number, Record<string, unknown>][] = [
    [
      'POST',
      '/agents/demo/facts?userId=dora',
      { content: '   ' },
      400,
      { error: "Invalid request body: 'content' must not be blank", code: 'PLT_ERR_INVALID_BODY' }
    ],
    [
      'POST',
      '/agents/demo/facts?userId=dora',
      { content: 'x'.repeat(513) },
      400,
      { error: "Invalid request body: 'content' must NOT have more than 512 characters", code: 'PLT_ERR_INVALID_BODY' }
    ],
    [
      'POST',
      '/agents/demo/facts?userId=dora',
      {},
      400,
      { error: "Invalid request body: 'content' is required", code: 'PLT_ERR_INVALID_BODY' }
    ],
    [
      'POST',
      '/agents/demo/facts?userId=dora',
      { content: 7 },
      400,
      { error: "Invalid request body: 'content' must be string", code: 'PLT_ERR_INVALID_BODY' }
    ],
    [
      'POST',
      '/agents/demo/facts?userId=dora',
      { content: 'x', confidence: 0.2 },
      400,
      {
        error: "Invalid request body: 'confidence' is below platform.ai.governance.memory.min-confidence (0.5)",
        code: 'PLT_ERR_INVALID_BODY'
      }
    ],
    [
      'POST',
      '/agents/demo/facts',
      { content: 'x' },
      400,
      { error: "Invalid query parameter 'userId': userId or sessionId is required", code: 'PLT_ERR_INVALID_QUERY' }
    ],
    [
      'DELETE',
      `/agents/demo/facts/${id}`,
      undefined,
      400,
      { error: "Invalid query parameter 'userId': userId or sessionId is required", code: 'PLT_ERR_INVALID_QUERY' }
    ],
    [
      'POST',
      '/agents/nobody/facts?userId=dora',
      { content: 'x' },
      404,
      { error: "Unknown agent 'nobody'", code: 'PLT_ERR_AGENT_NOT_FOUND' }
    ],
    [
      'DELETE',
      `/agents/demo/facts/${id}?userId=someone-else`,
      undefined,
      404,
      { error: `No fact '${id}' under user:someone-else`, code: 'PLT_ERR_UNKNOWN_FACT' }
    ],
    [
      'DELETE',
      '/agents/demo/facts/not-an-id?userId=dora',
      undefined,
      404,
      { error: "No fact 'not-an-id' under user:dora", code: 'PLT_ERR_UNKNOWN_FACT' }
    ]
  ]
  for (const [method, path, body, status, answer] of cases) {
    const r = await call(tp, method, path, { token: ALICE, ...(body !== undefined ? { body } : {}) })
    t.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}`)
    t.match(r.body, answer)
    t.match(tp.platform.audit.entries(1)[0], { principal: 'alice', success: false, message: answer.error })
  }
  t.same(
    (await facts('userId=dora')).facts.map((f: { text: string }) => f.text),
    ['kept'],
    'only the valid fact was stored, and it is still there'
  )
})

t.test('with the memory sink off: 503 in our body (reads say enabled: false)', async (t) => {
  const off = await adminPlatform(WRITER)
  t.teardown(off.close)
  addHelperAgent(off)
  const add = await call(off, 'POST', '/agents/helper/facts?userId=bob', { token: ALICE, body: { content: 'x' } })
  t.equal(add.status, 503)
  t.same(add.body, {
    error: 'State controller not wired',
    code: 'PLT_ERR_AGENT_STATE_NOT_WIRED',
    hint: 'Facts are the governance memory sink: set platform.ai.governance.memory.enabled=true (governance enabled)'
  })
  t.match(off.platform.audit.entries(1)[0], { action: 'agent_state.fact.add', success: false })
  const remove = await call(off, 'DELETE', '/agents/helper/facts/1-0?userId=bob', { token: ALICE })
  t.equal(remove.status, 503)
  t.match((await call(off, 'GET', '/agents/helper/facts?userId=bob', { token: BOB })).body, {
    enabled: false,
    facts: []
  })
})
