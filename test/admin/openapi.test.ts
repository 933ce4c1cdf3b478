// GET /api/admin/openapi.json: generated from the route table, valid OpenAPI 3.1, covering every
// route the admin area registered.
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { adminPlatform, call } from './helpers.js'

const tp = await adminPlatform()
t.teardown(tp.close)

t.test('the document is valid OpenAPI 3.1 and names every admin route', async (t) => {
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
    .filter((x) => x.pattern.startsWith('/api/admin/') && !x.pattern.startsWith('/api/admin/governance/'))
  t.ok(registered.length >= 40, `${registered.length} admin routes registered`)
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
  const ids = Object.values(doc.paths).flatMap((ops: any) => Object.values(ops).map((o: any) => o.operationId))
  t.equal(new Set(ids).size, ids.length, 'operation ids are unique')
})
