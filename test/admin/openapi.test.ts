// GET /api/admin/openapi.json: generated from the route table and the routes other areas describe,
// valid OpenAPI 3.1, covering every route registered under /api/admin (governance included) and
// /api/interactions.
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { ALICE, TOKENS, adminPlatform, call } from './helpers.js'

const tp = await adminPlatform({ 'platform.auth.tokens': TOKENS })
t.teardown(tp.close)

t.test('the document is valid OpenAPI 3.1 and names every admin, governance and interactions route', async (t) => {
  const r = await call(tp, 'GET', '/openapi.json')
  t.equal(r.status, 200)
  const doc = r.body
  t.equal(doc.openapi, '3.1.0')
  const result = await new Validator().validate(doc)
  t.same(result.errors ?? [], [], 'no validation error')
  t.equal(result.valid, true)
  const broken = { ...doc, paths: { ...doc.paths, '/x': { get: { responses: 'none' } } } }
  t.equal((await new Validator().validate(broken)).valid, false, 'the validator does refuse a bad document')

  const registered = tp.platform.http
    .listRoutes()
    .filter((x) => x.pattern.startsWith('/api/admin/') || /^\/api\/interactions(\/|$)/.test(x.pattern))
  t.ok(registered.length >= 40, `${registered.length} routes registered`)
  const governance = registered.filter((x) => x.pattern.startsWith('/api/admin/governance/'))
  t.equal(governance.flatMap((x) => x.methods).length, 13, 'the governance routes are among them')
  const interactions = registered.filter((x) => x.pattern.startsWith('/api/interactions'))
  t.equal(interactions.flatMap((x) => x.methods).length, 6, 'and the interactions routes')
  for (const { pattern, methods } of registered)
    for (const m of methods) t.ok(doc.paths[pattern]?.[m.toLowerCase()], `${m} ${pattern} is documented`)
  const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((m) => `${m} ${p}`))
  t.equal(documented.length, registered.flatMap((x) => x.methods).length, 'and nothing else')
})

t.test('operations carry their schemas, gates and security from the table', async (t) => {
  const doc = (await call(tp, 'GET', '/openapi.json')).body
  const broadcast = doc.paths['/api/admin/broadcasters/broadcast'].post
  t.same(broadcast['x-platform-gate'], { write: 'broadcast' })
  t.same(broadcast.requestBody.content['application/json'].schema.required, ['broadcasterId', 'message'])
  t.same(Object.keys(broadcast.responses), ['200', '400', '401', '403', '404'])
  t.same(broadcast.security, [{ bearer: [] }, { platformAuth: [] }])

  const journal = doc.paths['/api/admin/journal'].get
  t.same(journal['x-platform-gate'], { read: 'content' })
  t.same(
    journal.parameters.find((p: any) => p.name === 'limit'),
    {
      name: 'limit',
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 10000, default: 100 }
    }
  )
  t.same(doc.paths['/api/admin/overview'].get.security[0], {}, 'open reads: a principal is optional')
  t.same(doc.paths['/api/admin/journal/{id}/log'].get.parameters, [
    { name: 'id', in: 'path', required: true, schema: { type: 'string' } }
  ])
  t.ok(doc.paths['/api/admin/journal/{id}/log'].get.responses['200'].content['text/plain'])
  t.equal(doc.paths['/api/admin/overview'].get.operationId, 'getOverview', 'ids are named below /api/admin')
  const run = doc.paths['/api/admin/workflow/{id}/run'].post
  t.same(Object.keys(run.responses), ['200', '202', '400', '401', '403', '404', '503'], 'a run may answer 202')
  t.match(run.responses['202'].description, /WAITING_APPROVAL/)
  t.same(doc.paths['/api/admin/workflow/runs/{runId}'].get['x-platform-gate'], { read: 'content' })
  t.equal(doc.paths['/api/admin/governance/kill-switch/arm'].post.operationId, 'postGovernanceKillSwitchArm')
  t.equal(doc.paths['/api/interactions/{id}/cancel'].post.operationId, 'postInteractionsIdCancel')
  const ids = Object.values(doc.paths).flatMap((ops: any) => Object.values(ops).map((o: any) => o.operationId))
  t.equal(new Set(ids).size, ids.length, 'operation ids are unique')
})

t.test('governance and interactions operations carry their gates and schemas', async (t) => {
  const doc = (await call(tp, 'GET', '/openapi.json')).body
  const arm = doc.paths['/api/admin/governance/kill-switch/arm'].post
  t.same(arm['x-platform-gate'], { write: 'governance.kill_switch.arm' })
  t.same(Object.keys(arm.responses), ['200', '400', '401', '403', '404', '503'])
  t.same(arm.requestBody.content['application/json'].schema.required, ['reason'])
  const decisions = doc.paths['/api/admin/governance/decisions'].get
  t.same(decisions['x-platform-gate'], { read: 'content' })
  t.same(decisions.security, [{ bearer: [] }, { platformAuth: [] }])
  t.equal(doc.paths['/api/admin/governance/reload'].post.requestBody.required, false, 'reload may send no body')

  const create = doc.paths['/api/interactions'].post
  t.same(create['x-platform-gate'], { write: 'platform.interactions.http-write-enabled' })
  t.same(create.requestBody.content['application/json'].schema.required, ['message'])
  t.ok(create.responses['409'], 'a reused Idempotency-Key')
  const list = doc.paths['/api/interactions'].get
  t.same(list.security[0], {}, 'owner reads: anonymous callers see their own (none)')
  t.same(
    list.parameters.map((p: any) => p.name),
    ['limit', 'conversationId', 'cursor']
  )
  t.same(doc.paths['/api/interactions/{id}'].delete.parameters, [
    { name: 'id', in: 'path', required: true, schema: { type: 'string' } }
  ])
})

t.test('the described schemas match what the routes refuse', async (t) => {
  const doc = (await call(tp, 'GET', '/openapi.json')).body
  // every documented integer query parameter with a minimum: one below it is a 400
  let probed = 0
  for (const [path, ops] of Object.entries(doc.paths) as [string, any][]) {
    const op = ops.get
    if (op === undefined || path.includes('{')) continue
    for (const p of op.parameters ?? []) {
      if (p.in !== 'query' || p.schema.type !== 'integer' || p.schema.minimum === undefined) continue
      const res = await fetch(`${tp.url}${path}?${p.name}=${p.schema.minimum - 1}`, {
        headers: { authorization: `Bearer ${ALICE}` }
      })
      t.equal(res.status, 400, `GET ${path}?${p.name}=${p.schema.minimum - 1}`)
      probed++
    }
  }
  t.ok(probed >= 3, `${probed} bounds probed`)
  // a key outside check's closed schema is refused
  const schema = doc.paths['/api/admin/governance/check'].post.requestBody.content['application/json'].schema
  t.equal(schema.additionalProperties, false)
  const res = await fetch(`${tp.url}/api/admin/governance/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agentid: 'a' })
  })
  t.equal(res.status, 400)
})

t.test('describing a route the server did not register is refused', async (t) => {
  t.throws(
    () => tp.platform.http.describe('GET', '/api/interactions/nothing-here', { summary: 'x', gate: { read: 'open' } }),
    /not registered/
  )
  t.throws(
    () => tp.platform.http.describe('PUT', '/api/interactions', { summary: 'x', gate: { read: 'open' } }),
    /not registered/
  )
})

t.test("the Error schema's codes are the union of the core's and every installed area's", async (t) => {
  const doc = (await call(tp, 'GET', '/openapi.json')).body
  const codes: string[] = doc.components.schemas.Error.properties.code.enum
  // an internal code never reaches a client (the edge answers it as PLT_ERR_INTERNAL)
  t.same(
    codes,
    Object.values(tp.platform.errors)
      .filter((d) => d.internal !== true)
      .map((d) => d.code)
  )
  t.notOk(codes.includes('PLT_ERR_CONFIG_INVALID'), 'internal codes are left out')
  for (const c of [
    'PLT_ERR_NOT_FOUND',
    'PLT_ERR_ADMIN_WRITE_DISABLED',
    'PLT_ERR_UNKNOWN_WORKFLOW',
    'PLT_ERR_RELOAD_EMPTY'
  ])
    t.ok(codes.includes(c), `${c}: the core's, the gates', admin's and governance's codes are listed`)
})
