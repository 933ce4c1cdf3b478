/**
 * Reads the imports of the source files with the TypeScript parser: value and type imports,
 * `export ... from`, `import()` calls and `import('…')` types. A dynamic specifier that is not a
 * literal is resolved when it names a `const` bound to a string in the same file; otherwise the
 * import is kept with `computed` set, so the boundary test can refuse it. Package self-references
 * (`uws-agent-platform/sdk/dispatch`) resolve through package.json's exports. The boundary test judges
 * the imports; `node --import tsx test/architecture/import-graph.ts` prints
 * the cycles and cross-area imports of the tree.
 *
 * Why not dependency-cruiser or eslint-plugin-boundaries: both skip an `import()` whose specifier
 * is a template literal or an expression without a word (dependency-cruiser 17.4 tried on this
 * tree), which is the gap this parser closes, and neither reports the line of an import.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'

export interface Import {
  /** Repository-relative paths with forward slashes (`runtime/mcp/index.ts`). */
  from: string
  /**
   * The file the specifier names, or the bare specifier of a package (`node:fs`, `lmdb`); for a
   * computed specifier, the expression's text.
   */
  to: string
  specifier: string
  line: number
  kind: 'import' | 'export' | 'dynamic' | 'import-type'
  /** `import type` / `export type`, an `import('…')` type, or every named binding marked `type`. */
  typeOnly: boolean
  /** The names an `import {...}` or `export {...} from` binds (empty for `*`, default-only and side-effect imports). */
  names: string[]
  /** A namespace import (`import * as x`) or `export * from`: every name of the target is reached. */
  star: boolean
  /** True when the specifier is an expression the parser cannot resolve to a string. */
  computed: boolean
}

export const ROOT = resolve(import.meta.dirname, '../..')
export const RUNTIME = join(ROOT, 'runtime')
export const BENCH = join(ROOT, 'bench')
export const SDK = join(ROOT, 'sdk')

export const rel = (abs: string): string => relative(ROOT, abs).split(sep).join('/')

/** The `.ts` files under `dir` (no declaration files): the runtime's and the bench's sources. */
export function runtimeFiles(dir = RUNTIME): string[] {
  return filesUnder(dir, (name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
}

/** The sdk's sources: its JavaScript and the declarations beside it. */
export function sdkFiles(dir = SDK): string[] {
  return filesUnder(dir, (name) => name.endsWith('.js') || name.endsWith('.d.ts'))
}

function filesUnder(dir: string, take: (name: string) => boolean): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...filesUnder(p, take))
    else if (take(name)) out.push(p)
  }
  return out
}

export function parse(file: string, text = readFileSync(file, 'utf8')): ts.SourceFile {
  const kind = file.endsWith('.js') || file.endsWith('.mjs') ? ts.ScriptKind.JS : ts.ScriptKind.TS
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind)
}

/** The package's own export map (`uws-agent-platform/sdk` -> `sdk/index.js`), read from package.json. */
const SELF = ((): { name: string; paths: Map<string, string> } => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string
    exports: Record<string, string | { default: string }>
  }
  const paths = new Map<string, string>()
  for (const [key, value] of Object.entries(pkg.exports)) {
    const target = (typeof value === 'string' ? value : value.default).replace(/^\.\//, '')
    const source = target.startsWith('dist/') ? target.slice('dist/'.length).replace(/\.js$/, '.ts') : target
    paths.set(key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`, source)
  }
  return { name: pkg.name, paths }
})()

/** A relative specifier as the repository file it names: `x.js` is `x.ts` when that exists (our TS sources). */
function resolveRelative(file: string, s: string): string {
  const abs = resolve(dirname(file), s)
  const ts = abs.replace(/\.js$/, '.ts')
  if (ts !== abs && (existsSync(ts) || !existsSync(abs))) return rel(ts)
  return rel(abs)
}

/** The string a specifier expression stands for: a literal, or a `const` in the same file bound to one. */
function specifierText(spec: ts.Expression, source: ts.SourceFile): string | undefined {
  if (ts.isStringLiteral(spec) || ts.isNoSubstitutionTemplateLiteral(spec)) return spec.text
  if (!ts.isIdentifier(spec)) return undefined
  const found: ts.VariableDeclaration[] = []
  const look = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === spec.text) found.push(node)
    ts.forEachChild(node, look)
  }
  look(source)
  const d = found.length === 1 ? found[0]! : undefined
  const isConst = d !== undefined && (ts.getCombinedNodeFlags(d) & ts.NodeFlags.Const) !== 0
  return isConst && d.initializer !== undefined && ts.isStringLiteral(d.initializer) ? d.initializer.text : undefined
}

export function importsOf(file: string, source = parse(file)): Import[] {
  const out: Import[] = []
  const add = (
    spec: ts.Expression,
    node: ts.Node,
    kind: Import['kind'],
    typeOnly: boolean,
    names: string[],
    star = false
  ): void => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
    const s = specifierText(spec, source)
    if (s === undefined) {
      const text = spec.getText(source)
      out.push({ from: rel(file), to: text, specifier: text, line, kind, typeOnly, names, star, computed: true })
      return
    }
    const to = s.startsWith('.') ? resolveRelative(file, s) : (SELF.paths.get(s) ?? s)
    out.push({ from: rel(file), to, specifier: s, line, kind, typeOnly, names, star, computed: false })
  }
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const c = node.importClause
      const named =
        c?.namedBindings !== undefined && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined
      const typeOnly =
        c !== undefined &&
        (c.isTypeOnly ||
          (named !== undefined && named.length > 0 && c.name === undefined && named.every((e) => e.isTypeOnly)))
      const star = c?.namedBindings !== undefined && ts.isNamespaceImport(c.namedBindings)
      add(
        node.moduleSpecifier,
        node,
        'import',
        typeOnly,
        named?.map((e) => (e.propertyName ?? e.name).text) ?? [],
        star
      )
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
      const c = node.exportClause
      const named =
        c !== undefined && ts.isNamedExports(c) ? c.elements.map((e) => (e.propertyName ?? e.name).text) : []
      add(node.moduleSpecifier, node, 'export', node.isTypeOnly, named, c === undefined || ts.isNamespaceExport(c))
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined
    ) {
      add(node.arguments[0], node, 'dynamic', false, [], true)
    } else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
      // `declare module '../config/index.js' { interface ConfigKeys ... }` augments names of that module
      const body = node.body
      const names =
        body !== undefined && ts.isModuleBlock(body)
          ? body.statements.flatMap((st) => (ts.isInterfaceDeclaration(st) ? [st.name.text] : []))
          : []
      add(node.name, node, 'import-type', true, names)
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      const q = node.qualifier
      const name = q === undefined ? undefined : ts.isIdentifier(q) ? q.text : undefined
      add(node.argument.literal, node, 'import-type', true, name === undefined ? [] : [name], name === undefined)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

export function areaOf(path: string): string | null {
  const parts = path.split('/')
  return parts[0] === 'runtime' && parts.length > 2 ? parts[1]! : null
}

export function graph(imports: Import[], key: (path: string) => string | null): Map<string, Set<string>> {
  const g = new Map<string, Set<string>>()
  for (const i of imports) {
    if (!i.to.startsWith('runtime/')) continue
    const a = key(i.from)
    const b = key(i.to)
    if (a === null || b === null || a === b) continue
    if (!g.has(a)) g.set(a, new Set())
    g.get(a)!.add(b)
  }
  return g
}

/** One cycle per strongly connected component (Tarjan), each written as a closed path. */
export function cycles(edges: Map<string, Set<string>>): string[][] {
  let index = 0
  const idx = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const on = new Set<string>()
  const out: string[][] = []
  const strong = (v: string): void => {
    idx.set(v, index)
    low.set(v, index)
    index++
    stack.push(v)
    on.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!))
    }
    if (low.get(v) === idx.get(v)) {
      const comp = new Set<string>()
      let w: string
      do {
        w = stack.pop()!
        on.delete(w)
        comp.add(w)
      } while (w !== v)
      if (comp.size > 1) out.push(loopThrough(edges, comp, v))
    }
  }
  for (const v of [...edges.keys()].sort()) if (!idx.has(v)) strong(v)
  return out
}

/** A shortest path from `start` back to itself inside one component. */
function loopThrough(edges: Map<string, Set<string>>, comp: Set<string>, start: string): string[] {
  const prev = new Map<string, string>()
  const queue = [start]
  const seen = new Set([start])
  while (queue.length > 0) {
    const v = queue.shift()!
    for (const w of edges.get(v) ?? []) {
      if (!comp.has(w)) continue
      if (w === start) {
        const path = [start]
        for (let c = v; c !== start; c = prev.get(c)!) path.splice(1, 0, c)
        return [...path, start]
      }
      if (!seen.has(w)) {
        seen.add(w)
        prev.set(w, v)
        queue.push(w)
      }
    }
  }
  return [start, start]
}

if (process.argv[1] === import.meta.filename) {
  const all = runtimeFiles().flatMap((f) => importsOf(f))
  for (const c of cycles(graph(all, (p) => p))) console.log('file cycle:', c.join(' -> '))
  for (const c of cycles(graph(all, areaOf))) console.log('area cycle:', c.join(' -> '))
  for (const i of all) {
    const a = areaOf(i.from)
    const b = areaOf(i.to)
    if (b !== null && a !== b) console.log(`${i.from}:${i.line} -> ${i.to}`)
  }
}
