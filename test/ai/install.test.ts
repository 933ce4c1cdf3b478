import t from 'tap'
import { definePlugin, agent } from 'uws-agent-platform/sdk'
import { startTestPlatform } from '../helpers/platform.js'
import { AREAS, installAreas } from '../../runtime/areas.js'
import { AI } from '../../runtime/ai/index.js'
import { aiArea } from '../../runtime/ai/install.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import type { Manifest } from '../../runtime/plugins/index.js'

t.test('the ai area is served, installed after every area it declares', async (t) => {
  const tp = await startTestPlatform({}, { install: installAreas })
  t.teardown(tp.close)
  const names = tp.platform.areaNames
  t.same(
    names,
    AREAS.map((a) => a.name),
    'installed in the order of AREAS'
  )
  t.ok(names.includes('ai'))
  for (const dep of aiArea.dependsOn)
    t.ok(names.indexOf(dep) >= 0 && names.indexOf(dep) < names.indexOf('ai'), `${dep} before ai`)
  t.same(tp.platform.area(AI).agentNames(), [], 'no plugin, no agent')

  const plugin = definePlugin({ agents: [agent({ name: 'helper', description: 'helps', endpoint: '/helper' })] })
  const manifest: Manifest = {
    name: 'helpers',
    version: '1.0.0',
    entry: 'index.js',
    sandbox: 'inline',
    permissions: { net: [], kv: false, env: [] },
    limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 1 }
  }
  tp.platform.plugins.set('/plugins/helpers', manifest, inlineInstance(plugin, { log: tp.platform.logger }))
  t.same(tp.platform.area(AI).agentNames(), ['helper'], 'reads the plugin registry as it is')
})

t.test('the ai area refuses to start without its dependencies', async (t) => {
  await t.rejects(startTestPlatform({}, { install: (p) => p.use(aiArea) }), {
    message: 'area "ai" depends on "scope", which is not installed'
  })
})
