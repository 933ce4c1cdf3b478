/**
 * Reads every runtime/**\/*.ts file's imports (value and type imports, `export ... from`, dynamic
 * `import()`) with the TypeScript scanner, and finds cycles among files and among areas.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'

export interface Import { from: string, to: string, specifier: string, line: number }

export const ROOT = resolve(import.meta.dirname, '../..')
export const RUNTIME = join(ROOT, 'runtime')

export function runtimeFiles (dir = RUNTIME): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...runtimeFiles(p))
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p)
  }
  return out
}

/** The repository-relative path with forward slashes (`runtime/mcp/index.ts`). */
export const rel = (abs: string) => relative(ROOT, abs).split(sep).join('/')

/** Every relative import of one file, resolved to the `.ts` file it names. */
export function importsOf (file: string): Import[] {
  const text = readFileSync(file, 'utf8')
  const info = ts.preProcessFile(text, true, true)
  const out: Import[] = []
  for (const ref of info.importedFiles) {
    if (!ref.fileName.startsWith('.')) continue
    const target = resolve(dirname(file), ref.fileName.replace(/\.js$/, '.ts'))
    const line = text.slice(0, ref.pos).split('\n').length
    out.push({ from: rel(file), to: rel(target), specifier: ref.fileName, line })
  }
  return out
}

/** The area a runtime file belongs to: its first folder under runtime/, or null for the root files. */
export function areaOf (path: string): string | null {
  const parts = path.split('/')
  return parts[0] === 'runtime' && parts.length > 2 ? parts[1]! : null
}

/** Every elementary cycle's representative: one cycle per strongly connected component, as a path. */
export function cycles (edges: Map<string, Set<string>>): string[][] {
  let index = 0
  const idx = new Map<string, number>(); const low = new Map<string, number>()
  const stack: string[] = []; const on = new Set<string>(); const out: string[][] = []
  const strong = (v: string): void => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) { strong(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)) } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!))
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = []
      let w: string
      do { w = stack.pop()!; on.delete(w); comp.push(w) } while (w !== v)
      if (comp.length > 1 || edges.get(v)?.has(v)) out.push(pathThrough(edges, new Set(comp), v))
    }
  }
  for (const v of [...edges.keys()].sort()) if (!idx.has(v)) strong(v)
  return out
}

/** A shortest cycle from `start` back to itself inside one component, for a readable message. */
function pathThrough (edges: Map<string, Set<string>>, comp: Set<string>, start: string): string[] {
  const prev = new Map<string, string>(); const queue = [start]; const seen = new Set([start])
  while (queue.length > 0) {
    const v = queue.shift()!
    for (const w of edges.get(v) ?? []) {
      if (!comp.has(w)) continue
      if (w === start) { const path = [v]; let c = v; while (c !== start) { c = prev.get(c)!; path.unshift(c) } return [...path, start] }
      if (!seen.has(w)) { seen.add(w); prev.set(w, v); queue.push(w) }
    }
  }
  return [start, start]
}

export function graph (imports: Import[], key: (path: string) => string | null): Map<string, Set<string>> {
  const g = new Map<string, Set<string>>()
  for (const i of imports) {
    const a = key(i.from); const b = key(i.to)
    if (a === null || b === null || a === b) continue
    if (!g.has(a)) g.set(a, new Set())
    g.get(a)!.add(b)
  }
  return g
}

if (process.argv[1] === import.meta.filename) {
  const all = runtimeFiles().flatMap(importsOf)
  for (const c of cycles(graph(all, (p) => p))) console.log('file cycle:', c.join(' -> '))
  for (const c of cycles(graph(all, areaOf))) console.log('area cycle:', c.join(' -> '))
  const deep = all.filter((i) => { const a = areaOf(i.from); const b = areaOf(i.to); return b !== null && a !== b && !/\/index\.ts$/.test(i.to) })
  for (const d of deep) console.log('deep:', `${d.from}:${d.line}`, '->', d.to)
}
