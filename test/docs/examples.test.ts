// Every shell, YAML and JSON example of README.md and docs/*.md runs: curl commands against a real
// platform (bundled plugins, the settings of the block's `<!-- example: -->` comment), YAML through
// the loader that would read it, manifests through the manifest parser. A block that cannot run
// says why in `<!-- example skip: ... -->`; the skips are listed at the end.
import t, { type Test } from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { parseDocument } from 'yaml'
import { pages, readBlocks, outsideReferences, where, ROOT, type Block } from '../helpers/doc-pages.js'
import {
  steps,
  matchOutput,
  substitute,
  rewriteHost,
  runCurl,
  runPlatform,
  type Ran,
  type Step
} from '../helpers/doc-shell.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { installAreas, loadConfig } from '../../runtime/areas.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { parseManifest } from '../../runtime/plugins/manifest.js'

// a platform with the bundled plugins starts for every shell block: about 45 s on an idle 2-core box,
// 240 s in a CI dry run beside the other test files
t.setTimeout(480_000)

const BUNDLED = join(ROOT, 'plugins')
const SHELL = new Set(['sh', 'bash', 'shell', 'console'])
const counts = { curl: 0, platform: 0, yaml: 0, json: 0 }
const skipped: string[] = []

const start = (config: Record<string, unknown> = {}) =>
  startTestPlatform({ 'platform.plugins.dirs': [BUNDLED], ...config }, { install: installAreas })

t.test('no page points outside the repository', async (t) => {
  for (const f of pages().flatMap(outsideReferences))
    t.fail(
      `${f.file}:${f.line} refers to ${f.why}: "${f.text}"; say the fact itself, or link a file of this repository`
    )
  t.pass('every page checked')
})

// one platform with the bundled plugins parses every policy example, so plugin policy types and
// `type: scope` resolve as they would when served
const shared = await start()
t.teardown(shared.close)

for (const page of pages()) {
  t.test(page, async (t) => {
    let blocks: Block[]
    try {
      blocks = readBlocks(page)
    } catch (err) {
      t.fail((err as Error).message)
      return
    }
    // files a block saves with `file=` (policy files, platform.yaml) for later blocks of the page
    const scratch = mkdtempSync(join(tmpdir(), 'docs-examples-'))
    const session: Session = { bound: new Map(), env: {} }
    t.teardown(async () => {
      await session.tp?.close()
      rmSync(scratch, { recursive: true, force: true })
    })
    for (const [i, b] of blocks.entries()) {
      if (b.directive.skip !== undefined) {
        skipped.push(`${where(b)}: ${b.directive.skip}`)
        continue
      }
      if (b.lang === 'yaml' || b.lang === 'yml')
        await t.test(`${b.file}:${b.line} yaml`, async (t) => {
          checkYaml(t, b, scratch, blocks[i + 1])
        })
      else if (b.lang === 'json')
        await t.test(`${b.file}:${b.line} json`, async (t) => {
          checkJson(t, b, blocks[i + 1])
        })
      else if (SHELL.has(b.lang))
        await t.test(`${b.file}:${b.line} ${b.lang}`, async (t) => {
          await runShell(t, b, scratch, session)
        })
      else if (['', 'text', 'http'].includes(b.lang) && /^\s*curl\s/m.test(b.text)) {
        // a curl command in a block that is not marked as shell would escape the check
        t.fail(
          `${where(b)}: a block with curl commands must be fenced as \`\`\`sh (or carry <!-- example skip: reason -->)`
        )
      }
    }
  })
}

t.test('the examples ran', async (t) => {
  // the extraction itself could break and find nothing: the pages hold at least these many
  t.ok(counts.curl >= 8, `curl commands run: ${counts.curl}`)
  t.ok(counts.yaml >= 8, `YAML examples loaded: ${counts.yaml}`)
  t.ok(counts.json >= 1, `JSON manifests parsed: ${counts.json}`)
  t.comment(
    `ran ${counts.curl} curl and ${counts.platform} platform commands, loaded ${counts.yaml} YAML and ${counts.json} JSON examples`
  )
  t.comment(
    `not run (${skipped.length}), each with the reason its page gives:\n${skipped.map((s) => `  ${s}`).join('\n')}`
  )
})

type YamlKind = 'platform' | 'policy' | 'rules-fragment'

function kindOf(data: unknown): YamlKind | undefined {
  if (Array.isArray(data))
    return data.length > 0 && data.every((r) => r !== null && typeof r === 'object' && 'condition' in r)
      ? 'rules-fragment'
      : undefined
  if (data === null || typeof data !== 'object') return undefined
  const keys = Object.keys(data)
  if (keys.some((k) => k === 'platform' || /^(org\.)?platform\./.test(k))) return 'platform'
  if (keys.includes('policies') || keys.includes('rules')) return 'policy'
  return undefined
}

/** `error=below`: the message is the page's next block, which shows it to the reader. */
function expectedError(b: Block, next: Block | undefined): string | undefined {
  const e = b.directive.opts.error
  return e === 'below' ? (next?.text.trim() ?? '(no block below)') : e
}

function checkYaml(t: Test, b: Block, scratch: string, next: Block | undefined): void {
  const doc = parseDocument(b.text, { uniqueKeys: true })
  if (doc.errors.length > 0) {
    t.fail(`${where(b)}: not valid YAML: ${doc.errors[0]!.message}`)
    return
  }
  const kind = (b.directive.opts.as ?? kindOf(doc.toJS())) as YamlKind | undefined
  if (kind === undefined || !['platform', 'policy', 'rules-fragment'].includes(kind)) {
    t.fail(
      `${where(b)}: cannot tell what this YAML is; put <!-- example: as=platform|policy|rules-fragment --> or <!-- example skip: reason --> before it`
    )
    return
  }
  let error: Error | undefined
  let loaded = ''
  try {
    if (kind === 'platform') {
      const file = join(scratch, 'platform.yaml')
      writeFileSync(file, b.text)
      loaded = `${Object.keys(loadConfig({ file, env: {}, cwd: scratch }).values).length} config keys`
    } else {
      const text = kind === 'policy' ? b.text : `rules:\n${b.text.replace(/^(?=.)/gm, '  ')}`
      const policies = governanceOf(shared.platform)!.parse('yaml', `yaml:${b.file}:${b.line}`, text)
      if (policies.length === 0) throw new Error('the document holds no policy')
      loaded = `policies ${policies.map((p) => p.name).join(', ')}`
    }
  } catch (err) {
    error = err as Error
  }
  counts.yaml++
  const expected = expectedError(b, next)
  if (expected !== undefined) {
    t.ok(
      error?.message.includes(expected),
      `${where(b)}: loading as ${kind} must fail with "${expected}"; got ${error === undefined ? `success (${loaded})` : `"${error.message}"`}`
    )
  } else {
    t.ok(
      error === undefined,
      `${where(b)}: loads as ${kind}${error !== undefined ? `; it fails: ${error.message}` : ` (${loaded})`}`
    )
  }
  if (b.directive.opts.file !== undefined) {
    const to = join(scratch, b.directive.opts.file)
    mkdirSync(dirname(to), { recursive: true })
    writeFileSync(to, b.text)
  }
}

function checkJson(t: Test, b: Block, next: Block | undefined): void {
  let data: unknown
  try {
    data = JSON.parse(b.text)
  } catch (err) {
    t.fail(`${where(b)}: not valid JSON: ${(err as Error).message}`)
    return
  }
  const isManifest =
    b.directive.opts.as === 'manifest' ||
    (b.directive.opts.as === undefined &&
      data !== null &&
      typeof data === 'object' &&
      'name' in data &&
      'version' in data)
  if (!isManifest) {
    t.fail(
      `${where(b)}: cannot tell what this JSON is; put <!-- example: as=manifest --> or <!-- example skip: reason --> before it`
    )
    return
  }
  counts.json++
  const expected = expectedError(b, next)
  let error: Error | undefined
  try {
    parseManifest(data)
  } catch (err) {
    error = err as Error
  }
  if (expected !== undefined)
    t.ok(
      error?.message.includes(expected),
      `${where(b)}: the manifest must fail with "${expected}"; got ${error?.message ?? 'success'}`
    )
  else
    t.ok(
      error === undefined,
      `${where(b)}: a valid plugin.json${error !== undefined ? `; it fails: ${error.message}` : ''}`
    )
}

/** Settings whose relative paths mean files the page saved with `file=`. */
function resolveConfig(config: Record<string, unknown>, scratch: string): Record<string, unknown> {
  const out = { ...config }
  const files = out['platform.ai.governance.policy-files']
  if (Array.isArray(files))
    out['platform.ai.governance.policy-files'] = files.map((f) =>
      isAbsolute(String(f)) ? f : resolve(scratch, String(f))
    )
  return out
}

/** What a shell block leaves for a following `<!-- example: continue -->` block. */
interface Session {
  tp?: TestPlatform
  bound: Map<string, string>
  env: Record<string, string>
}

async function runShell(t: Test, b: Block, scratch: string, session: Session): Promise<void> {
  if (b.directive.opts.continue === undefined) {
    await session.tp?.close()
    delete session.tp
    session.bound = new Map()
    session.env = {}
  } else if (Object.keys(b.directive.config).length > 0) {
    t.fail(`${where(b)}: a 'continue' block runs on the previous block's platform, so it cannot set config keys`)
    return
  }
  const all = steps(b.text, b.line)
  const other = all.filter((s) => s.kind === 'other')
  if (other.length > 0 || all.length === 0) {
    t.fail(
      `${where(b)}: cannot run \`${other[0]?.command ?? '(empty block)'}\` (line ${other[0]?.line ?? b.line}); the test runs curl and platform commands. ` +
        'Make the block runnable or put <!-- example skip: reason --> before it'
    )
    return
  }
  const env = Object.assign(session.env, b.directive.env)
  for (const s of all.filter((x) => x.kind === 'assign')) {
    const [, name, value] = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(s.command)!
    if (value!.trim() === '...' || value!.trim() === '…') {
      if (env[name!] === undefined) {
        t.fail(`${where(b)}: line ${s.line} leaves ${name} to the reader; give it in <!-- example: ${name}=... -->`)
        return
      }
    } else env[name!] = value!.replace(/^(['"])(.*)\1$/, '$2')
  }
  if (session.tp === undefined && all.some((s) => s.kind === 'curl')) {
    try {
      session.tp = await start(resolveConfig(b.directive.config, scratch))
    } catch (err) {
      t.fail(
        `${where(b)}: the platform for this block did not start with ${JSON.stringify(b.directive.config)}: ${(err as Error).message}`
      )
      return
    }
  }
  const { tp, bound } = session
  for (const s of all) {
    // other steps failed the block above
    if (s.kind === 'assign' || s.kind === 'other') continue
    const sub = substitute(s.command, bound)
    if (sub.unbound.length > 0) {
      t.fail(
        `${b.file}:${s.line}: ${sub.unbound.join(', ')} is not printed by an earlier command of this block (or of the block it continues)`
      )
      return
    }
    const command = s.kind === 'curl' ? rewriteHost(sub.command, tp!.port) : sub.command
    // a curl example must talk to the documented local server, never to a host on the network
    const elsewhere =
      s.kind === 'curl'
        ? [...command.matchAll(/\b[a-z]+:\/\/[^\s'"]+/gi)]
            .map((m) => m[0])
            .filter((u) => !u.startsWith(`http://127.0.0.1:${tp!.port}/`))
        : []
    if (s.kind === 'curl' && (elsewhere.length > 0 || !command.includes(`http://127.0.0.1:${tp!.port}/`))) {
      t.fail(
        `${b.file}:${s.line}: the curl command must name the local server (localhost:8080 or 127.0.0.1:8080) and no other host; found ${elsewhere.join(', ') || 'no URL'}`
      )
      return
    }
    const ran = s.kind === 'curl' ? await runCurl(command, env, scratch) : await runPlatform(command, env)
    counts[s.kind]++
    if (!check(t, b, s, ran, bound)) return
  }
}

/** One command's outcome against the page; false stops the block (later steps depend on it). */
function check(t: Test, b: Block, s: Step, ran: Ran, bound: Map<string, string>): boolean {
  const said = `${b.file}:${s.line} (${b.heading})\n  ran:  ${ran.command}\n  exit: ${ran.exit}${ran.status !== undefined ? `, HTTP ${ran.status}` : ''}\n  got:  ${ran.output.slice(0, 1500)}`
  let ok: boolean
  if (s.kind === 'curl') {
    ok =
      ran.exit === 0 &&
      ran.status !== undefined &&
      (s.status !== undefined ? ran.status === s.status : ran.status >= 200 && ran.status < 300)
    t.ok(ok, `${said}\n  want: ${s.status !== undefined ? `HTTP ${s.status}` : 'a 2xx status'}`)
  } else {
    ok = ran.exit === (s.status ?? 0)
    t.ok(ok, `${said}\n  want: exit ${s.status ?? 0}`)
  }
  // a 2xx that carries an error (JSON-RPC, a tool's isError) only passes when the page shows it
  const refused = s.expected.length === 0 ? errorIn(ran.output) : undefined
  if (refused !== undefined) {
    t.fail(`${said}\n  want: no error, or the page showing this output under the command (${refused})`)
    ok = false
  }
  for (const e of s.expected) {
    const why = matchOutput(e, ran.output, bound)
    t.ok(why === undefined, `${said}\n  want: ${e}`)
    ok &&= why === undefined
  }
  return ok
}

/** The error a JSON body (the last line of the output) reports, if any. */
function errorIn(output: string): string | undefined {
  const last = output.trim().split('\n').at(-1) ?? ''
  let body: unknown
  try {
    body = JSON.parse(last)
  } catch {
    return undefined
  }
  if (body === null || typeof body !== 'object') return undefined
  const o = body as { error?: unknown; result?: { isError?: unknown } }
  if (o.error !== undefined) return `an error: ${JSON.stringify(o.error)}`
  if (o.result?.isError === true) return 'a tool result with isError'
  return undefined
}
