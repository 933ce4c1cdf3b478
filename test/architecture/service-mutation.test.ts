/**
 * "No area changes another's service after install" (docs/architecture.md, "Extension points"):
 * what an install runs never calls a setter or an adder on a service another area provides, nor on
 * a core service but the HTTP server, and never assigns to one. It adds at an extension point the
 * other area declares, or the dependency is turned around. How code is attributed to an install and
 * what counts as a change: service-mutation.ts.
 */
import t from 'tap'
import { join } from 'node:path'
import { ROOT, runtimeFiles } from './import-graph.js'
import { serviceMutations } from './service-mutation.js'

// one program for both tests: the type checker over the runtime takes most of the time
const FIXTURES = join(ROOT, 'test/architecture/fixtures/service-mutation')
const found = serviceMutations([...runtimeFiles(), join(FIXTURES, 'owner.ts'), join(FIXTURES, 'intruder.ts')])

t.test('the checker finds an install changing another area service, directly or through a helper', async (t) => {
  const sample = found.filter((m) => m.file.startsWith('test/'))
  t.same(
    sample.map((m) => `${m.area} -> ${m.owner} (${m.type}) line ${m.line}: ${m.text}`),
    [
      "sample-intruder -> sample-owner (OwnerService) line 7: service.hooks.set('through-a-helper', () => {})",
      "sample-intruder -> sample-owner (OwnerService) line 18: owner.addHook('direct', () => {})",
      "sample-intruder -> sample-owner (OwnerService) line 20: owner.label = 'assigned'",
      'sample-intruder -> sample-owner (OwnerService) line 21: platform.area(OWNER).addHook(n, () => {})'
    ]
  )
})

t.test('no install changes a service another area provides (or a core service)', async (t) => {
  const bad = found
    .filter((m) => m.file.startsWith('runtime/'))
    .map((m) => {
      const whose = m.owner === 'core' ? 'a core service' : `the service of area "${m.owner}"`
      const declare =
        m.owner === 'core'
          ? 'Declare an ExtensionPoint owned by CORE beside that service'
          : `Let "${m.owner}" declare an ExtensionPoint in its key.ts`
      return (
        `${m.file}:${m.line}: the install of area "${m.area}" runs \`${m.text}\`, which changes ${whose} (${m.type}). ` +
        `${declare}, read it at use time and add the value with platform.extend during the install, or turn the dependency around (docs/architecture.md, "Extension points")`
      )
    })
  t.same(bad, [], bad.join('\n'))
})
