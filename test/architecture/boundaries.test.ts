/**
 * The architecture rules of docs/architecture.md, checked on every runtime file's imports:
 * areas meet only through each other's index.ts, contracts import nothing of ours, index files
 * only re-export, no file or area import cycle, and every area imports only the areas it
 * declares in `dependsOn` (plus the core and contracts). The bench reaches the runtime like a
 * user does, the sdk imports nothing of the runtime, and an `import()` names what it loads.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import ts from 'typescript'
import { AREAS } from '../../runtime/areas.js'
import {
  BENCH,
  areaOf,
  cycles,
  graph,
  importsOf,
  parse,
  rel,
  runtimeFiles,
  sdkFiles,
  type Import
} from './import-graph.js'

/** Constructed by the Platform itself, so always present: any area may import them. */
const CORE = new Set(['config', 'http', 'events', 'observability', 'store', 'auth', 'plugins'])
/** The composition root: wires the areas, so it may import their install.ts. */
const ROOT_FILES = new Set(['runtime/platform.ts', 'runtime/areas.ts'])
/** The top layer: starts the platform (runtime/index.ts is the package's public entry). */
const TOP = new Set(['cli'])
/**
 * Files whose `import()` loads a plugin's entry file from a folder the operator names, so its
 * specifier is computed: never a module of ours. Every other `import()` names a literal (or a
 * `const` bound to one) that the checks here can follow.
 */
const PLUGIN_LOADERS = new Map([
  ['runtime/plugins/inline.ts', 'the inline tier imports the plugin entry, tagged per load'],
  ['runtime/plugins/worker/worker-task.ts', 'the worker tier imports the plugin entry, tagged per load'],
  ['runtime/scope/lint.ts', 'the scope linter imports a plugin folder to read its agents'],
  ['bench/lib/token-stream.ts', 'the streaming scenarios import their bench plugin from the checkout']
])

const files = runtimeFiles()
const imports: Import[] = files.flatMap((f) => importsOf(f))
const ours = imports.filter((i) => i.to.startsWith('runtime/'))
const where = (i: Import): string => `${i.from}:${i.line} imports '${i.specifier}'`
const benchImports = runtimeFiles(BENCH).flatMap((f) => importsOf(f))
const sdkImports = sdkFiles().flatMap((f) => importsOf(f))

t.test('the parser sees every kind of import', async (t) => {
  const sample = [
    "import { a, type B } from './x.js'",
    "import type { C } from '../y/index.js'",
    "export { d } from './z.js'",
    "export type { E } from './w.js'",
    "export * from './v.js'",
    "const m = await import('./u.js')",
    "import { type F } from 'node:fs'",
    'const t = await import(`./t.js`)',
    "const NAME = 'ws'",
    'const s = await import(NAME)',
    'const r = await import(`./${NAME}.js`)',
    "const q = await import('./' + NAME)",
    "type D = import('../p/contract.js').PluginDescriptor",
    "import { describePlugin } from 'uws-agent-platform/sdk/dispatch'"
  ].join('\n')
  const file = `${process.cwd()}/runtime/demo/sample.ts`
  const got = importsOf(file, ts.createSourceFile(file, sample, ts.ScriptTarget.Latest, true))
  t.same(
    got.map((i) => [i.to, i.kind, i.typeOnly, i.computed]),
    [
      ['runtime/demo/x.ts', 'import', false, false],
      ['runtime/y/index.ts', 'import', true, false],
      ['runtime/demo/z.ts', 'export', false, false],
      ['runtime/demo/w.ts', 'export', true, false],
      ['runtime/demo/v.ts', 'export', false, false],
      ['runtime/demo/u.ts', 'dynamic', false, false],
      ['node:fs', 'import', true, false],
      ['runtime/demo/t.ts', 'dynamic', false, false],
      ['ws', 'dynamic', false, false],
      ['`./${NAME}.js`', 'dynamic', false, true],
      ["'./' + NAME", 'dynamic', false, true],
      ['runtime/p/contract.ts', 'import-type', true, false],
      ['sdk/dispatch.js', 'import', false, false]
    ]
  )
  t.same(got[0]!.names, ['a', 'B'])
  t.same(got[2]!.names, ['d'])
  t.ok(got[4]!.star, 'export * reaches every name')
  t.same(got[11]!.names, ['PluginDescriptor'])
})

t.test('every import() names what it loads (a literal, or a const bound to one)', async (t) => {
  const bad: string[] = []
  const used = new Set<string>()
  for (const i of [...imports, ...benchImports, ...sdkImports]) {
    if (!i.computed) continue
    if (PLUGIN_LOADERS.has(i.from)) {
      used.add(i.from)
      continue
    }
    bad.push(
      `${i.from}:${i.line} imports \`${i.specifier}\`, which the checks cannot follow; write the specifier as a literal (or a const bound to one)`
    )
  }
  for (const f of PLUGIN_LOADERS.keys())
    if (!used.has(f)) bad.push(`${f}: listed in PLUGIN_LOADERS but has no computed import() now; drop the entry`)
  t.same(bad, [], bad.join('\n'))
})

t.test('the bench reaches the runtime through area indexes, the composition root and the package entry', async (t) => {
  const open = new Set(['runtime/areas.ts', 'runtime/platform.ts', 'runtime/index.ts'])
  const bad = benchImports
    .filter((i) => i.to.startsWith('runtime/') && !open.has(i.to) && i.to !== `runtime/${areaOf(i.to)}/index.ts`)
    .map(
      (i) =>
        `${where(i)}: the bench measures what users get; import runtime/${areaOf(i.to)}/index.ts (export the name there if the bench needs it) or the composition root`
    )
  t.same(bad, [], bad.join('\n'))
})

t.test('the sdk imports nothing of the runtime (the runtime imports the sdk: wire types live there)', async (t) => {
  const bad = sdkImports
    .filter((i) => i.to.startsWith('runtime/'))
    .map(
      (i) =>
        `${where(i)}: the runtime imports uws-agent-platform/sdk, so this closes a loop; declare the type in sdk/ and import it from the runtime`
    )
  t.same(bad, [], bad.join('\n'))
})

t.test('an area reaches another only through its index.ts', async (t) => {
  const bad: string[] = []
  for (const i of ours) {
    const from = areaOf(i.from)
    const to = areaOf(i.to)
    if (to === null || from === to) continue
    if (i.to === `runtime/${to}/index.ts`) continue
    if (ROOT_FILES.has(i.from) && i.to === `runtime/${to}/install.ts`) continue
    bad.push(
      `${where(i)}: '${i.to}' is inside area '${to}'; import runtime/${to}/index.ts (add the name to its exports if other areas need it)`
    )
  }
  t.same(bad, [], bad.join('\n'))
})

t.test('areas use the composition root only for the Platform and Area types', async (t) => {
  const bad: string[] = []
  for (const i of ours) {
    const from = areaOf(i.from)
    if (from === null || TOP.has(from)) continue
    if (i.to === 'runtime/areas.ts' || i.to === 'runtime/index.ts')
      bad.push(`${where(i)}: areas never import the composition root or the public entry`)
    if (
      i.to === 'runtime/platform.ts' &&
      (!i.typeOnly || i.names.length === 0 || i.names.some((n) => n !== 'Platform' && n !== 'Area'))
    ) {
      bad.push(
        `${where(i)}: only \`import type { Platform, Area }\` may come from platform.ts (shared types go to runtime/contracts)`
      )
    }
  }
  t.same(bad, [], bad.join('\n'))
})

t.test('contracts import nothing of ours outside contracts, and no package', async (t) => {
  const bad = imports
    .filter(
      (i) =>
        areaOf(i.from) === 'contracts' &&
        (i.to.startsWith('runtime/') ? areaOf(i.to) !== 'contracts' : !i.to.startsWith('node:'))
    )
    .map((i) => `${where(i)}: runtime/contracts is the bottom layer`)
  t.same(bad, [], bad.join('\n'))
})

t.test('index.ts files only re-export', async (t) => {
  const bad: string[] = []
  for (const f of files.filter((f) => f.endsWith('/index.ts'))) {
    const src = parse(f, readFileSync(f, 'utf8'))
    for (const s of src.statements) {
      if (ts.isExportDeclaration(s) && s.moduleSpecifier !== undefined) continue
      const line = src.getLineAndCharacterOfPosition(s.getStart(src)).line + 1
      bad.push(
        `${rel(f)}:${line}: '${s.getText(src).split('\n')[0]}' is not a re-export; move it to a named file of the area`
      )
    }
  }
  t.same(bad, [], bad.join('\n'))
})

t.test('no file-level import cycle (type-only imports included)', async (t) => {
  const found = cycles(graph(ours, (p) => p)).map((c) => c.join(' -> '))
  t.same(found, [], `import cycles:\n${found.join('\n')}`)
})

t.test('the area graph has no cycle', async (t) => {
  const found = cycles(graph(ours, areaOf)).map((c) => c.join(' -> '))
  t.same(found, [], `area cycles:\n${found.join('\n')}`)
})

t.test('an area imports only the areas it declares in dependsOn (the core and contracts always)', async (t) => {
  // an area's folder may install several Areas (mcp and mcp-extras): its imports answer to all of them
  const declared = new Map<string, Set<string>>()
  for (const a of AREAS) {
    const folder = a.name.split('-')[0]!
    const set = declared.get(folder) ?? new Set<string>()
    for (const d of a.dependsOn) set.add(d.split('-')[0]!)
    declared.set(folder, set)
  }
  const bad: string[] = []
  for (const i of ours) {
    const from = areaOf(i.from)
    const to = areaOf(i.to)
    if (from === null || to === null || from === to || to === 'contracts' || TOP.has(from)) continue
    if (CORE.has(to)) continue
    if (declared.get(from)?.has(to) === true) continue
    bad.push(
      `${where(i)}: area '${from}' does not declare '${to}' in dependsOn${CORE.has(from) ? ` (a core area depends on no feature area)` : ''}`
    )
  }
  t.same(bad, [], bad.join('\n'))
})

t.test('AREAS lists every served area once, each after what it depends on', async (t) => {
  const seen = new Set<string>()
  for (const a of AREAS) {
    t.notOk(seen.has(a.name), `${a.name} listed once`)
    for (const d of a.dependsOn) t.ok(seen.has(d), `${a.name} comes after ${d}`)
    seen.add(a.name)
  }
  const folders = new Set(files.map((f) => areaOf(rel(f))).filter((a): a is string => a !== null))
  for (const f of folders) {
    if (CORE.has(f)) continue
    if (f === 'contracts' || TOP.has(f)) continue
    t.ok(
      [...seen].some((n) => n.split('-')[0] === f),
      `runtime/${f} is installed by AREAS`
    )
  }
})

t.test('a core area is one thing: the Platform builds it, so it has no install.ts and no Area in AREAS', async (t) => {
  const bad: string[] = []
  for (const f of files) {
    const area = areaOf(rel(f))
    if (area !== null && CORE.has(area) && rel(f) === `runtime/${area}/install.ts`)
      bad.push(`${rel(f)}: core area '${area}' is built by the Platform; it installs nothing`)
  }
  for (const a of AREAS)
    if (CORE.has(a.name.split('-')[0]!)) bad.push(`AREAS installs '${a.name}', a core area the Platform builds itself`)
  for (const a of AREAS)
    for (const d of a.dependsOn)
      if (CORE.has(d)) bad.push(`area '${a.name}' declares core area '${d}' in dependsOn: the core is always there`)
  t.same(bad, [], bad.join('\n'))
})
