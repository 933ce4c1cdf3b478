// Reads the fenced code blocks of the documentation pages, with the one-line setup comment a page
// may put right before a block:
//   <!-- example: platform.admin.http-write-enabled=true TOKEN=s3cret as=policy file=policies/x.yaml -->
//   <!-- example: continue -->   (the next shell block goes on where the previous one stopped)
//   <!-- example skip: why this block cannot run in a test -->
import { readFileSync, readdirSync, existsSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

export interface Directive {
  /** Dotted config keys (`platform.…`, `org.platform.…`) for the platform the block runs against. */
  config: Record<string, unknown>
  /** Shell variables (UPPER_CASE names) the block's commands see. */
  env: Record<string, string>
  /** Everything else: `as`, `file`, `error` (text the load must fail with, or `below`: the next block), `continue`. */
  opts: Record<string, string>
  skip?: string
}

export interface Block {
  /** Path relative to the repository, e.g. `docs/mcp.md`. */
  file: string
  /** 1-based line of the opening fence. */
  line: number
  lang: string
  text: string
  heading: string
  directive: Directive
}

export const where = (b: Block): string => `${b.file}:${b.line} (${b.heading})`

/** README.md and docs/*.md, the pages the examples test covers. */
export function pages(): string[] {
  return [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`)
  ]
}

/** The end of the value starting at `i`: a JSON string, a JSON list or object (may hold spaces), or a bare word. */
function valueEnd(s: string, i: number): number {
  if (s[i] !== '"' && s[i] !== '[' && s[i] !== '{') {
    while (i < s.length && !/\s/.test(s[i]!)) i++
    return i
  }
  let depth = 0
  let inString = false
  for (; i < s.length; i++) {
    const c = s[i]!
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') {
        inString = false
        if (depth === 0) return i + 1
      }
      continue
    }
    if (c === '"') inString = true
    else if (c === '[' || c === '{') depth++
    else if ((c === ']' || c === '}') && --depth === 0) return i + 1
  }
  return s.length
}

/** Parses the inside of `<!-- example: ... -->`; unknown words are errors so typos do not pass. */
export function parseDirective(body: string, at: string): Directive {
  const d: Directive = { config: {}, env: {}, opts: {} }
  let i = 0
  for (;;) {
    while (i < body.length && /\s/.test(body[i]!)) i++
    if (i >= body.length) return d
    const word = /^[^\s=]+/.exec(body.slice(i))![0]
    i += word.length
    if (body[i] !== '=') {
      // `continue`: run against the platform, variables and values of the page's previous shell block
      if (word === 'continue') {
        d.opts.continue = 'true'
        continue
      }
      throw new Error(`${at}: cannot read '${word}' in <!-- example: --> (write key=value, or continue)`)
    }
    const end = valueEnd(body, i + 1)
    const raw = body.slice(i + 1, end)
    i = end
    let value: unknown = raw
    try {
      value = JSON.parse(raw)
    } catch (err) {
      if (/^["[{]/.test(raw))
        throw new Error(
          `${at}: the value of '${word}' in <!-- example: --> is not valid JSON: ${(err as Error).message}`,
          { cause: err }
        )
    }
    if (/^(org\.)?platform\./.test(word)) d.config[word] = value
    else if (/^[A-Z_][A-Z0-9_]*$/.test(word)) d.env[word] = String(value)
    else if (['as', 'file', 'error'].includes(word)) d.opts[word] = String(value)
    else
      throw new Error(
        `${at}: unknown setting '${word}' in <!-- example: --> (config keys, UPPER_CASE shell variables, as, file, error, continue)`
      )
  }
}

/** The fenced blocks of `file` (relative to the repository), read from disk unless `text` is given. */
export function readBlocks(file: string, text = readFileSync(join(ROOT, file), 'utf8')): Block[] {
  const lines = text.split('\n')
  const out: Block[] = []
  let heading = '(top)'
  for (let i = 0; i < lines.length; i++) {
    const h = /^#{1,6}\s+(.*)$/.exec(lines[i]!)
    if (h !== null) {
      heading = h[1]!.trim()
      continue
    }
    if (/<!--\s*example/.test(lines[i]!)) {
      // a setup comment applies to the fence right after it; anywhere else it would silently do nothing
      let n = i + 1
      while (n < lines.length && lines[n]!.trim() === '') n++
      if (n >= lines.length || !/^\s*(`{3,}|~{3,})/.test(lines[n]!))
        throw new Error(`${file}:${i + 1}: an example comment must stand right before a fenced code block`)
      continue
    }
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!)
    if (open === null) continue
    const [, indent, fence, lang] = open as unknown as [string, string, string, string]
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length && !lines[j]!.trimStart().startsWith(fence); j++)
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!)
    if (j === lines.length) throw new Error(`${file}:${i + 1}: code fence never closed`)
    const at = `${file}:${i + 1}`
    let k = i - 1
    while (k >= 0 && lines[k]!.trim() === '') k--
    const comment = k >= 0 ? /^\s*<!--\s*example(\s+skip)?:\s*(.*?)\s*-->\s*$/.exec(lines[k]!) : null
    let directive: Directive = { config: {}, env: {}, opts: {} }
    if (comment !== null) {
      if (comment[1] !== undefined) {
        if (comment[2]!.length < 10)
          throw new Error(`${at}: '<!-- example skip: -->' needs a reason a reader understands`)
        directive.skip = comment[2]!
      } else directive = parseDirective(comment[2]!, at)
    } else if (k >= 0 && /<!--\s*example/.test(lines[k]!)) {
      throw new Error(
        `${at}: malformed example comment '${lines[k]!.trim()}' (one line: <!-- example: k=v ... --> or <!-- example skip: reason -->)`
      )
    }
    out.push({ file, line: i + 1, lang: lang.toLowerCase(), text: body.join('\n') + '\n', heading, directive })
    i = j
  }
  return out
}

// Pages must stand on their own: no pointers into the design notes, specification or tracker that
// live outside this repository.
const OUTSIDE: Array<[RegExp, string]> = [
  [/\.\.\/shared\/|\/work\/shared|\bshared\/(spec|reference)\b/, 'a path outside the repository'],
  [/\b(DESIGN|spec|reference|specification)\s*(\.md\s*)?§/i, 'a section of a document outside the repository'],
  [/\bDESIGN\.md\b|\bplatform-spec(\.md)?\b/, 'a document outside the repository'],
  [
    /\bthe spec\b|\bspec's\b|\breference (implementation|messages?|wording)\b|\bthe reference\b(?![ -](count|to|of|type)\b)|\breference's\b/i,
    'the specification or reference implementation, which are not in the repository'
  ],
  [/\bissues? \d+\b/i, 'the issue tracker, which is not in the repository']
]

/** Why a line of a page points outside the repository, if it does. */
export const outsideReason = (text: string): string | undefined => OUTSIDE.find(([re]) => re.test(text))?.[1]

export interface Finding {
  file: string
  line: number
  text: string
  why: string
}

/** Lines that point outside the repository, and relative links to files that do not exist in it. */
export function outsideReferences(file: string): Finding[] {
  const out: Finding[] = []
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n')
  lines.forEach((text, i) => {
    const why = outsideReason(text)
    if (why !== undefined) out.push({ file, line: i + 1, text: text.trim(), why })
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!.split('#')[0]!
      if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue
      const abs = resolve(ROOT, dirname(file), target)
      const rel = relative(ROOT, abs)
      if (rel.startsWith('..')) out.push({ file, line: i + 1, text: m[0], why: 'a link outside the repository' })
      else if (!existsSync(abs))
        out.push({ file, line: i + 1, text: m[0], why: `a link to ${rel}, which does not exist` })
    }
  })
  return out
}
