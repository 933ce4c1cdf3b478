/**
 * Reads the imports of every runtime/**\/*.ts file with the TypeScript parser: value and type
 * imports, `export ... from` and dynamic `import()` with a literal specifier. The boundary test
 * judges them; `node --import @tapjs/typescript/import test/architecture/import-graph.ts` prints
 * the cycles and cross-area imports of the tree.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'

export interface Import {
  /** Repository-relative paths with forward slashes (`runtime/mcp/index.ts`). */
  from: string
  /** The file the specifier names, or the bare specifier of a package (`node:fs`, `lmdb`). */
  to: string
  specifier: string
  line: number
  kind: 'import' | 'export' | 'dynamic'
  /** `import type` / `export type`, or every named binding marked `type`. */
  typeOnly: boolean
  /** The names an `import {...}` binds (empty for `*`, default-only and side-effect imports). */
  names: string[]
}

export const ROOT = resolve(import.meta.dirname, '../..')
export const RUNTIME = join(ROOT, 'runtime')

export const rel = (abs: string): string => relative(ROOT, abs).split(sep).join('/')

export function runtimeFiles(dir = RUNTIME): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...runtimeFiles(p))
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p)
  }
  return out
}

export function parse(file: string, text = readFileSync(file, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
}

export function importsOf(file: string, source = parse(file)): Import[] {
  const out: Import[] = []
  const add = (spec: ts.Expression, node: ts.Node, kind: Import['kind'], typeOnly: boolean, names: string[]): void => {
    if (!ts.isStringLiteral(spec)) return
    const s = spec.text
    const to = s.startsWith('.') ? rel(resolve(dirname(file), s.replace(/\.js$/, '.ts'))) : s
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
    out.push({ from: rel(file), to, specifier: s, line, kind, typeOnly, names })
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
      add(node.moduleSpecifier, node, 'import', typeOnly, named?.map((e) => (e.propertyName ?? e.name).text) ?? [])
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
      add(node.moduleSpecifier, node, 'export', node.isTypeOnly, [])
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined
    ) {
      add(node.arguments[0], node, 'dynamic', false, [])
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

/** The area a runtime file belongs to (its first folder under runtime/), or null for the root files. */
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
