import t from 'tap'
import ts from 'typescript'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { outsideReason } from '../helpers/doc-pages.js'

// Comments must stand on their own, like the docs pages: a reader of the repository cannot open
// design notes, a specification, a tracker or an upstream code base that live elsewhere.
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const DIRS = ['runtime', 'sdk', 'plugins', 'bench', 'test', 'bin']
const EXT = /\.(ts|js|mjs)$/

// Beyond the docs pages' rules: the short citations source comments tend to use.
const EXTRA: Array<[RegExp, string]> = [
  [
    /\bspec [A-Z]\d*\b|\(spec\b|\bspec(:| (scope |evaluation )?rules?\b| limit\b| names\b| property\b)/,
    'a part of the specification, which is not in the repository'
  ],
  [
    /\(reference\b|\breference (§|`|behaviour\b|[A-Z][a-z]+[A-Z])/,
    'the reference implementation, which is not in the repository'
  ],
  [/\bAtmosphere\b/i, 'the upstream project, which is not in the repository'],
  [/\bengineer('s|s)?\b/i, 'a person rather than the code']
]

function why(text: string): string | undefined {
  return outsideReason(text) ?? EXTRA.find(([re]) => re.test(text))?.[1]
}

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) continue
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...sourceFiles(p))
    else if (EXT.test(e.name)) out.push(p)
  }
  return out
}

/** Every `//` and `/* *\/` comment of a file, found by the TypeScript parser (so strings and regexes never count). */
export function comments(file: string, text: string): Array<{ line: number; text: string; comment: number }> {
  const sf = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    false,
    file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS
  )
  const seen = new Map<number, string>()
  const take = (ranges: ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) seen.set(r.pos, text.slice(r.pos, r.end))
  }
  const visit = (node: ts.Node): void => {
    take(ts.getLeadingCommentRanges(text, node.pos))
    take(ts.getTrailingCommentRanges(text, node.end))
    node.forEachChild(visit)
  }
  visit(sf)
  take(ts.getLeadingCommentRanges(text, sf.endOfFileToken.pos))
  const out: Array<{ line: number; text: string; comment: number }> = []
  for (const [pos, body] of seen) {
    const first = sf.getLineAndCharacterOfPosition(pos).line
    body.split('\n').forEach((l, i) => {
      out.push({ line: first + i + 1, text: l.trim(), comment: pos })
    })
  }
  return out.sort((a, b) => a.line - b.line)
}

/** Comment lines of `text` that point outside the repository. */
export function outsidePointers(file: string, text: string): string[] {
  const out: string[] = []
  const lines = comments(file, text)
  lines.forEach((c, i) => {
    // A pointer may wrap onto the next line of the same comment ("spec\n * rule 4").
    const next = lines[i + 1]?.comment === c.comment ? lines[i + 1]!.text.replace(/^\*\/?\s*|^\/\/\s*/, '') : ''
    const reason = why(c.text) ?? (next === '' || why(next) !== undefined ? undefined : why(`${c.text} ${next}`))
    if (reason !== undefined)
      out.push(`${file}:${c.line}: ${c.text}${reason === why(c.text) ? '' : ` ${next}`} (${reason})`)
  })
  return out
}

t.test('the scanner reads comments only, and catches each kind of pointer', async (t) => {
  const src = [
    "const a = '// as DESIGN §3 says' // the spec's order",
    'const re = /\\/\\/ spec C/',
    '/** Fails closed (spec scope rule 3). */',
    'function f () { return 1 } /* reference `hardenSystemPrompt` */',
    "// the governance engineer's script (issue 6)",
    '// keys of Atmosphere',
    '// a reference to the plugin; the reference count; unless its LoadSpec sets another',
    '/**',
    ' * the adapters of spec',
    ' * evaluation rule 4',
    ' */'
  ].join('\n')
  const found = outsidePointers('x.ts', src)
  t.same(
    found.map((f) => f.split(':')[1]),
    ['1', '3', '4', '5', '6', '9'],
    found.join('\n')
  )
})

t.test('source comments point only at what is in the repository', async (t) => {
  const found: string[] = []
  for (const d of DIRS) {
    for (const file of sourceFiles(join(ROOT, d)))
      found.push(...outsidePointers(relative(ROOT, file), readFileSync(file, 'utf8')))
  }
  t.same(found, [], found.join('\n'))
})
