import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ALICE, BOB, Api, startInteractions } from './helpers.js'
import { startTestPlatform } from '../helpers/platform.js'
import { installAreas } from '../../runtime/areas.js'

t.test('the write gate: flag first (403), then a principal (401); nothing is created', async (t) => {
  const off = await startInteractions({ 'platform.interactions.http-write-enabled': false })
  t.teardown(off.close)
  const denied = await off.api.create({ message: 'hi' })
  t.equal(denied.status, 403)
  t.same(denied.body, {
    error: 'Interaction write operations disabled',
    code: 'PLT_ERR_INTERACTIONS_WRITE_DISABLED',
    hint: 'Set platform.interactions.http-write-enabled=true to enable'
  })
  // the flag is checked before anything else, even a bad id or body
  for (const [method, path] of [
    ['POST', '/api/interactions/bad id/continue'],
    ['POST', '/api/interactions/x/cancel'],
    ['DELETE', '/api/interactions/x']
  ] as const)
    t.equal((await off.api.call(method, path, { token: ALICE })).status, 403, `${method} ${path}`)

  const on = await startInteractions()
  t.teardown(on.close)
  const anon = await on.api.create({ message: 'hi' }, null)
  t.equal(anon.status, 401)
  t.same(anon.body, {
    error: 'Authentication required for interaction write operations',
    code: 'PLT_ERR_INTERACTIONS_AUTH_REQUIRED',
    hint: 'Send an API token (Authorization: Bearer or X-Platform-Auth) or a JWT'
  })
  t.equal(
    (await on.api.create({ message: 'hi' }, 'not-a-known-token-000')).status,
    401,
    'an unknown token is no principal'
  )
  t.equal((await on.api.call('POST', '/api/interactions/x/cancel')).status, 401)
  t.equal((await on.api.call('DELETE', '/api/interactions/x')).status, 401)
  t.same((await on.api.call('GET', '/api/interactions', { token: ALICE })).body, [], 'nothing was created')
  t.same((await on.api.call('GET', '/api/interactions')).body, [], 'an anonymous read is allowed and sees nothing')
})

t.test('create, get, list, delete over the demo runtime', async (t) => {
  const tp = await startInteractions()
  t.teardown(tp.close)
  const { api } = tp
  const created = await api.create({ message: 'hello there', metadata: { tag: 'x' } })
  t.equal(created.status, 200, '200, not 201')
  const i = created.body
  t.match(i, {
    id: /^int-[0-9a-f-]{36}$/,
    parentId: null,
    conversationId: /^conv-[0-9a-f-]{36}$/,
    agentId: null,
    userId: 'alice',
    model: 'demo-1',
    status: 'COMPLETED',
    background: false,
    store: true,
    finalText: 'You said: "hello there".',
    usage: { input: 2, output: 4, cachedInput: 0, total: 6, model: 'demo-1' },
    errorMessage: null
  })
  t.same(Object.keys(i), [
    'id',
    'parentId',
    'conversationId',
    'agentId',
    'userId',
    'model',
    'status',
    'background',
    'store',
    'steps',
    'finalText',
    'usage',
    'errorMessage',
    'createdAt',
    'updatedAt'
  ])
  t.same(
    i.steps.map((s) => [s.seq, s.type]),
    [
      [0, 'text'],
      [1, 'usage'],
      [2, 'completion']
    ]
  )
  t.equal(i.steps[0]!.text, 'You said: "hello there".', 'the deltas coalesced into one text step')
  t.equal(i.steps[2]!.text, i.finalText)
  t.same(Object.keys(i.steps[0]!), ['seq', 'type', 'text', 'toolName', 'data', 'usage', 'createdAt'])

  const got = await api.get(i.id)
  t.equal(got.status, 200)
  t.same(got.body, i, 'the stored record is what create answered')

  for (const who of [BOB, null]) {
    const other = await api.get(i.id, who)
    t.equal(other.status, 404, 'another owner gets the same 404 as an unknown id')
    t.same(other.body, { error: `Unknown interaction '${i.id}'`, code: 'PLT_ERR_INTERACTION_NOT_FOUND' })
  }
  const unknown = await api.get('int-nope')
  t.same(unknown.body, { error: "Unknown interaction 'int-nope'", code: 'PLT_ERR_INTERACTION_NOT_FOUND' })
  for (const bad of ['a.b', 'x'.repeat(129), '%20']) {
    const r = await api.get(bad)
    t.equal(r.status, 400, bad)
    t.match(r.body, { error: 'Invalid interaction id', code: 'PLT_ERR_INTERACTION_ID_INVALID' })
  }

  const bobs = await api.create({ message: 'mine' }, BOB)
  const list = await api.call('GET', '/api/interactions', { token: ALICE })
  t.same(
    list.body.map((x: any) => x.id),
    [i.id],
    'the owner filter is the caller'
  )
  t.notOk('steps' in list.body[0], 'list items carry no steps')
  t.same((await api.call('GET', `/api/interactions?conversationId=${i.conversationId}`, { token: BOB })).body, [])
  t.same(
    (await api.call('GET', `/api/interactions?conversationId=${bobs.body.conversationId}`, { token: BOB })).body.map(
      (x: any) => x.id
    ),
    [bobs.body.id]
  )

  t.equal((await api.call('DELETE', `/api/interactions/${i.id}`, { token: BOB })).status, 404, 'not the owner')
  const del = await api.call('DELETE', `/api/interactions/${i.id}`, { token: ALICE })
  t.same([del.status, del.body], [200, { deleted: i.id }])
  t.equal((await api.get(i.id)).status, 404)
  t.equal((await api.call('DELETE', `/api/interactions/${i.id}`, { token: ALICE })).status, 404, 'gone')
  t.equal((await api.call('DELETE', '/api/interactions/a.b', { token: ALICE })).status, 400)
})

t.test('bad bodies are 400 with a clear error and start nothing', async (t) => {
  const tp = await startInteractions()
  t.teardown(tp.close)
  const { api } = tp
  const missing = { error: "missing 'message' field", code: 'PLT_ERR_INTERACTION_MESSAGE_MISSING' }
  for (const body of [{}, { message: '' }, { message: '   ' }, { message: 3 }])
    t.same((await api.create(body)).body, missing, JSON.stringify(body))
  t.same((await api.call('POST', '/api/interactions', { token: ALICE })).body, missing, 'no body at all')
  const invalid: [unknown, RegExp][] = [
    [[1], /expected a JSON object/],
    [{ message: 'x', agent: 'demo' }, /unknown key 'agent'; the keys are message, previousInteractionId, agentId/],
    [{ message: 'x', background: 'true' }, /'background' must be true or false/],
    [{ message: 'x', store: 0 }, /'store' must be true or false/],
    [{ message: 'x', model: 5 }, /'model' must be a non-empty string/],
    [{ message: 'x', agentId: '' }, /'agentId' must be a non-empty string/],
    [{ message: 'x', metadata: [1] }, /'metadata' must be an object/],
    // a turn dressed as a tool call would slip past scope confinement, which admits tool calls
    [{ message: 'x', metadata: { action: 'call_tool' } }, /'metadata.action' is reserved/],
    [{ message: 'x', metadata: { tool_name: 'x' } }, /'metadata.tool_name' is reserved/]
  ]
  for (const [body, error] of invalid) {
    const r = await api.create(body)
    t.equal(r.status, 400, JSON.stringify(body))
    t.match(r.body, { error, code: 'PLT_ERR_INVALID_BODY' })
  }
  t.match((await api.call('POST', '/api/interactions', { token: ALICE, raw: '{"message":' })).body, {
    code: 'PLT_ERR_MALFORMED_JSON'
  })
  const agent = await api.create({ message: 'x', agentId: 'nobody' })
  t.same([agent.status, agent.body.code], [400, 'PLT_ERR_INTERACTION_UNKNOWN_AGENT'])
  const prev = await api.create({ message: 'x', previousInteractionId: 'int-unknown' })
  t.same(prev.body, {
    error: 'Unknown or unauthorized previous interaction',
    code: 'PLT_ERR_INTERACTION_PREVIOUS_UNKNOWN'
  })
  t.same((await api.create({ message: 'x', previousInteractionId: 'a b' })).body.code, 'PLT_ERR_INTERACTION_ID_INVALID')
  t.same((await api.call('GET', '/api/interactions', { token: ALICE })).body, [], 'nothing was created')
  t.equal(tp.service.inFlight, 0)
})

t.test('store:false answers and streams but persists nothing', async (t) => {
  const tp = await startInteractions()
  t.teardown(tp.close)
  const r = await tp.api.create({ message: 'ephemeral', store: false })
  t.match(r.body, { status: 'COMPLETED', store: false, finalText: 'You said: "ephemeral".' })
  t.equal(r.body.steps.length, 3)
  t.equal(await tp.service.store.load(r.body.id), undefined, 'not in the store')
  t.equal((await tp.api.get(r.body.id)).status, 404)
  t.same((await tp.api.call('GET', '/api/interactions', { token: ALICE })).body, [])
})

t.test('demo-principal: requests without a principal run as it; a real principal still wins', async (t) => {
  const tp = await startInteractions({ 'platform.interactions.demo-principal': 'demo-user' })
  t.teardown(tp.close)
  const r = await tp.api.create({ message: 'hi' }, null)
  t.match(r.body, { status: 'COMPLETED', userId: 'demo-user' })
  t.equal((await tp.api.get(r.body.id, null)).status, 200, 'reads run as it too')
  t.equal((await tp.api.get(r.body.id, ALICE)).status, 404)
  t.match((await tp.api.create({ message: 'hi' })).body, { userId: 'alice' })
  const warned = tp.logs.find((l) => String(l.msg).includes('demo-principal'))
  t.ok(warned, 'start-up warned that it is for demos only')
})

t.test('platform.interactions.enabled: false serves no route', async (t) => {
  const tp = await startTestPlatform(
    { 'platform.interactions.enabled': false, 'platform.interactions.http-write-enabled': true },
    { install: installAreas }
  )
  t.teardown(tp.close)
  const api = new Api(tp.url)
  t.equal((await api.call('GET', '/api/interactions')).status, 404)
  t.equal((await api.call('POST', '/api/interactions', { body: { message: 'x' } })).status, 404)
})

t.test('roles reach the policies from the credentials, never from the body', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'interactions-roles-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'roles.yaml')
  writeFileSync(
    file,
    'version: "1"\npolicies:\n  - name: analysts-only\n    type: authorization\n    config: {required-roles: [analyst]}\n'
  )
  const ann = 'ann-analyst-token-0123456789'
  const tp = await startInteractions({
    'platform.ai.governance.policy-files': [file],
    'platform.auth.tokens': [
      { token: ann, principal: 'ann', roles: ['analyst'] },
      { token: ALICE, principal: 'alice' }
    ]
  })
  t.teardown(tp.close)
  const claim = await tp.api.create({ message: 'hello', metadata: { roles: ['analyst'] } })
  t.equal(claim.status, 400, 'a claimed role is refused')
  t.match(claim.body.error, /'metadata.roles' is reserved/)
  t.match((await tp.api.create({ message: 'hello' })).body, {
    status: 'FAILED',
    errorMessage: /denied by policy analysts-only/
  })
  t.match((await tp.api.create({ message: 'hello' }, ann)).body, { status: 'COMPLETED', userId: 'ann' })
})
