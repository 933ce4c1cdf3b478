// The workflows area: installed after the admin and the fleet it declares, serving its routes under
// /api/admin through the admin route table (so they are in the OpenAPI document), and serving and
// providing nothing when the admin control plane is off.
import t from 'tap'
import { startTestPlatform } from '../helpers/platform.js'
import { installAreas } from '../../runtime/areas.js'
import { WORKFLOWS } from '../../runtime/workflows/key.js'
import { workflowsArea } from '../../runtime/workflows/install.js'
import { adminPlatform, call } from '../admin/helpers.js'

t.test('installed after admin and fleet; its routes are served, gated and documented', async (t) => {
  const tp = await adminPlatform()
  t.teardown(tp.close)
  const names = tp.platform.areaNames
  for (const dep of workflowsArea.dependsOn)
    t.ok(names.indexOf(dep) >= 0 && names.indexOf(dep) < names.indexOf('workflows'), `${dep} before workflows`)
  const routes = tp.platform.area(WORKFLOWS).routes.map((r) => `${r.method} ${r.path}`)
  t.same(routes, [
    'GET /workflow/approvals',
    'POST /workflow/approvals/{approvalId}',
    'GET /workflow',
    'POST /workflow',
    'GET /workflow/{id}',
    'DELETE /workflow/{id}',
    'POST /workflow/{id}/run',
    'GET /workflow/runs',
    'GET /workflow/runs/{runId}'
  ])
  const doc = (await call(tp, 'GET', '/openapi.json')).body
  for (const r of tp.platform.area(WORKFLOWS).routes)
    t.ok(doc.paths['/api/admin' + r.path]?.[r.method.toLowerCase()], `${r.method} ${r.path} is documented`)
  t.same((await call(tp, 'GET', '/workflow')).body, [])
  const anonymous = await call(tp, 'POST', '/workflow', { body: { id: 'w', name: 'w', version: 1, nodes: [] } })
  t.equal(anonymous.status, 403, 'writes pass the admin write gate (flag off by default)')
  t.match({ ...tp.platform.audit.entries(1)[0] }, { action: 'workflow.write.denied.flag', target: 'w' })
})

t.test('without its dependencies installed first it is refused', async (t) => {
  await t.rejects(startTestPlatform({}, { install: (p) => p.use(workflowsArea) }), {
    message: 'area "workflows" depends on "admin", which is not installed'
  })
})

t.test('platform.admin.enabled=false: no workflow route, no service', async (t) => {
  const off = await startTestPlatform({ 'platform.admin.enabled': false }, { install: installAreas })
  t.teardown(off.close)
  t.ok(off.platform.areaNames.includes('workflows'), 'installed')
  t.notOk(off.platform.hasArea(WORKFLOWS), 'provides nothing')
  t.same(
    off.platform.http.listRoutes().filter((r) => r.pattern.startsWith('/api/admin/workflow')),
    [],
    'serves nothing'
  )
  t.equal((await call(off, 'GET', '/workflow')).status, 404)
})
