/**
 * Narrow doors (docs/architecture.md): an area's index.ts exports what other areas, the sdk, the
 * bench and the package entry (runtime/index.ts) import, and nothing for tests alone (tests import
 * inner files). A type several areas share has one path, runtime/contracts, so no other index
 * re-exports it.
 */
import t from 'tap'
import { join } from 'node:path'
import { BENCH, ROOT, areaOf, importsOf, rel, runtimeFiles, sdkFiles, type Import } from './import-graph.js'
import { exportedNames } from './exported-names.js'

const CONTRACTS = 'runtime/contracts/index.ts'
const users: Import[] = [...runtimeFiles(), ...runtimeFiles(BENCH), ...sdkFiles()].flatMap((f) => importsOf(f))
const indexes = runtimeFiles()
  .map(rel)
  .filter((r) => /^runtime\/[^/]+\/index\.ts$/.test(r))
const contractNames = new Set(exportedNames(join(ROOT, CONTRACTS)).map((n) => n.name))

/** The names of `index` that files outside its area import; every name when one imports `*`. */
function usedNames(index: string): Set<string> | 'all' {
  const used = new Set<string>()
  for (const i of users) {
    if (i.to !== index || areaOf(i.from) === areaOf(index)) continue
    if (i.star && i.names.length === 0) return 'all'
    for (const n of i.names) used.add(n)
  }
  return used
}

t.test('an index exports only names another area, the sdk, the bench or the package entry imports', async (t) => {
  const bad: string[] = []
  for (const index of indexes) {
    const used = usedNames(index)
    if (used === 'all') continue
    for (const n of exportedNames(join(ROOT, index)))
      if (!used.has(n.name))
        bad.push(
          `${index}:${n.line}: exports '${n.name}', which nothing outside runtime/${areaOf(index)} imports; drop it from the index (tests import the inner file)`
        )
  }
  t.same(bad, [], bad.join('\n'))
})

t.test('no index but contracts re-exports a contracts name (a shared type has one path)', async (t) => {
  const bad: string[] = []
  for (const index of indexes.filter((i) => i !== CONTRACTS)) {
    for (const i of users.filter((u) => u.from === index && u.to.startsWith('runtime/contracts/')))
      bad.push(`${index}:${i.line}: re-exports '${i.specifier}'; importers take shared types from runtime/contracts`)
    for (const n of exportedNames(join(ROOT, index)))
      if (contractNames.has(n.name))
        bad.push(`${index}:${n.line}: exports '${n.name}', a runtime/contracts name; import it from runtime/contracts`)
  }
  t.same(bad, [], bad.join('\n'))
})
