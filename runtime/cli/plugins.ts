import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { isAbsolute, join, relative, resolve } from 'node:path'
import { Writable } from 'node:stream'
import type { Config } from '../config/index.js'
import { isPlatformError } from '../contracts/index.js'
import { EventBus } from '../events/index.js'
import { createLogger } from '../observability/index.js'
import {
  PluginHost,
  PluginRegistry,
  contributionNames,
  readManifest,
  resolveGrant,
  grantLine,
  tierFactory,
  PLUGINS_ERRORS,
  buildCapabilities,
  lmdbPluginKv,
  NAME_PATTERN,
  type PluginStatus,
  type SandboxInstance
} from '../plugins/index.js'

type Out = { log: (s: string) => void; error: (s: string) => void }

export const PLUGINS_USAGE = `Usage: platform plugins <list|validate|new> [options]

  plugins list [--json]          Static check, not a running server's state: load every plugin
                                 of platform.plugins.dirs here (with the operator grants of
                                 platform.yaml) and show name, version, sandbox (worker and
                                 inline are full trust), state (live, failed with the error,
                                 disabled) and contributions
  plugins validate <dir>         Check a plugin folder: plugin.json, entry, loading it in the
                                 sandbox it asks for; exits 1 with the errors
  plugins new <name> [--dir D]   Scaffold a working plugin in D/<name> (default ./plugins)
                                 with plugin.json, index.mjs and its own test (node --test)
`

const silent = () =>
  createLogger('silent', {
    destination: new Writable({
      write(_c, _e, cb) {
        cb()
      }
    })
  })
const noKv = lmdbPluginKv(() => {
  throw new Error('the key-value store is not available to the CLI')
})

function contributions(c: PluginStatus['contributes']): string {
  const parts: string[] = []
  for (const [k, v] of Object.entries(c)) if (v.length > 0) parts.push(`${k}: ${v.join(', ')}`)
  return parts.length > 0 ? parts.join('; ') : '-'
}

/** Sandboxes whose code runs with the host's own rights; net and env grants bind only `ctx` there. */
const FULL_TRUST = new Set(['worker', 'inline'])
export const FULL_TRUST_NOTE =
  'worker and inline plugins run with full trust (Node APIs, network, files, environment): their net and env grants bind only ctx.fetch and ctx.env, not the code itself'

export async function pluginsList(config: Config, json: boolean, out: Out): Promise<number> {
  const registry = new PluginRegistry(new EventBus())
  const host = new PluginHost({
    config,
    logger: silent(),
    registry,
    capabilities: { logger: silent(), kv: noKv },
    watch: false
  })
  await host.start()
  const status = registry.status()
  const warnings = host.unknownGrants().map((w) => w.message)
  await host.close()
  const scope = `static check: each plugin of ${host.dirs.join(', ')} loaded here with the grants of ${config.file ?? 'the default configuration'} (not a running server's state)`
  if (json) {
    // stdout stays the plugin array; what kind of listing it is goes to stderr
    out.error(scope)
    for (const w of warnings) out.error(`warning: ${w}`)
    out.log(
      JSON.stringify(
        status.map((s) => ({ ...s, fullTrust: s.sandbox !== undefined && FULL_TRUST.has(s.sandbox) })),
        null,
        2
      )
    )
    return 0
  }
  out.log(scope)
  for (const w of warnings) out.log(`warning: ${w}`)
  if (status.length === 0) {
    out.log(`no plugins in ${host.dirs.join(', ')}`)
    return 0
  }
  const rows = status.map((s) => [
    s.name,
    s.version ?? '-',
    s.sandbox === undefined ? '-' : FULL_TRUST.has(s.sandbox) ? `${s.sandbox} (full trust)` : s.sandbox,
    s.state,
    s.state === 'live' ? contributions(s.contributes) : (s.error ?? '')
  ])
  const head = ['NAME', 'VERSION', 'SANDBOX', 'STATE', 'CONTRIBUTES / ERROR']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')
  out.log(line(head))
  for (const r of rows) out.log(line(r))
  if (status.some((s) => s.sandbox !== undefined && FULL_TRUST.has(s.sandbox))) out.log(`note: ${FULL_TRUST_NOTE}`)
  return 0
}

export async function pluginsValidate(dir: string | undefined, out: Out): Promise<number> {
  if (dir === undefined) {
    out.error(`platform: plugins validate needs a folder\n\n${PLUGINS_USAGE}`)
    return 2
  }
  const abs = resolve(dir)
  let parsed
  try {
    parsed = readManifest(abs)
  } catch (e) {
    if (!isPlatformError(e, PLUGINS_ERRORS.MANIFEST_INVALID)) throw e
    out.error(`${dir}: invalid`)
    for (const m of e.params.errors as string[]) out.error(`  ${m}`)
    return 1
  }
  const { manifest, askedLimits, entryPath } = parsed
  // what the operator must grant for it to load as asked
  let needs = ''
  try {
    resolveGrant(manifest.name, manifest, askedLimits, {})
  } catch (e) {
    if (isPlatformError(e, PLUGINS_ERRORS.GRANT_REFUSED))
      needs = grantLine(manifest.name, e.params.grant as Parameters<typeof grantLine>[1])
    else throw e
  }
  const grant = resolveGrant(manifest.name, manifest, askedLimits, {
    sandbox: manifest.sandbox,
    permissions: manifest.permissions,
    limits: askedLimits
  })
  let instance: SandboxInstance | undefined
  let note = ''
  try {
    const factory = tierFactory(grant.sandbox)
    instance = await factory({
      dir: abs,
      entry: entryPath,
      manifest,
      grant,
      capabilities: buildCapabilities({ logger: silent(), kv: noKv, env: {} }, manifest.name, grant)
    })
  } catch (e) {
    if (isPlatformError(e, PLUGINS_ERRORS.TIER_UNAVAILABLE))
      note = `${e.message}: only plugin.json was checked, the entry was not loaded`
    else {
      out.error(`${dir}: invalid`)
      out.error(
        `  ${manifest.entry}: ${e instanceof Error ? (e.name === 'Error' || isPlatformError(e) ? e.message : `${e.name}: ${e.message}`) : String(e)}`
      )
      return 1
    }
  }
  out.log(`${dir}: ok`)
  out.log(`  ${manifest.name} ${manifest.version}, sandbox ${manifest.sandbox}`)
  if (instance !== undefined) {
    const d = instance.descriptor
    out.log(`  contributes: ${contributions(contributionNames(d))}`)
    await instance.dispose()
  }
  if (note !== '') out.log(`  note: ${note}`)
  out.log(needs !== '' ? `  the operator must grant in platform.yaml: ${needs}` : '  needs no operator grant')
  return 0
}

/**
 * How to run this CLI from here: its bin by path. `npx platform` in the package's own checkout makes
 * npm 11 build the package (its `prepare`) before every command, 20 s or more; the bin answers at once.
 */
export function cliCommand(): string {
  const bin = fileURLToPath(new URL('../../../bin/platform.js', import.meta.url))
  const rel = relative(process.cwd(), bin)
  return `node ${rel.startsWith('..') || isAbsolute(rel) ? bin : rel}`
}

export function pluginsNew(name: string | undefined, parent: string | undefined, out: Out): number {
  if (name === undefined) {
    out.error(`platform: plugins new needs a name\n\n${PLUGINS_USAGE}`)
    return 2
  }
  if (!new RegExp(NAME_PATTERN).test(name)) {
    out.error(`platform: plugin name '${name}' must be 1-64 of a-z 0-9 _ - starting with a letter or digit`)
    return 2
  }
  const dir = resolve(parent ?? 'plugins', name)
  if (existsSync(dir)) {
    out.error(`platform: ${dir} already exists`)
    return 1
  }
  mkdirSync(dir, { recursive: true })
  for (const [file, text] of Object.entries(scaffold(name))) writeFileSync(join(dir, file), text)
  const shown = relative(process.cwd(), dir)
  const at = shown === '' || shown.startsWith('..') ? dir : shown
  out.log(`created ${at}`)
  out.log(`  test it:   cd ${at} && node --test`)
  out.log(`  check it:  ${cliCommand()} plugins validate ${at}`)
  out.log(
    '  it goes live as soon as the folder is in a plugin directory (no grant needed: it runs in the isolate tier)'
  )
  // the test imports uws-agent-platform/sdk: say so when it cannot resolve from there
  try {
    createRequire(join(dir, 'index.test.mjs')).resolve('uws-agent-platform/sdk')
  } catch {
    out.log(
      `  note: node --test needs uws-agent-platform resolvable from ${at}: create the plugin inside a project that has it (npm install uws-agent-platform) or inside this platform's checkout`
    )
  }
  return 0
}

function scaffold(name: string): Record<string, string> {
  return {
    'plugin.json':
      JSON.stringify(
        {
          name,
          version: '0.1.0',
          description: `The ${name} plugin`,
          entry: 'index.mjs',
          sandbox: 'isolate',
          permissions: {},
          limits: { memoryMb: 64, timeoutMs: 5000, concurrency: 4 }
        },
        null,
        2
      ) + '\n',
    // .mjs and no package.json of its own: ES modules whatever the project's package.json says,
    // and uws-agent-platform/sdk resolves from the project's node_modules (or, in this platform's own
    // checkout, as the package itself)
    'index.mjs': `// The ${name} plugin. Everything it contributes is listed in definePlugin; see docs/plugins.md.
import { definePlugin, tool, prompt, McpMessage } from 'uws-agent-platform/sdk'

export default definePlugin({
  tools: [
    tool({
      name: 'hello',
      description: 'Greets someone by name',
      input: { type: 'object', properties: { name: { type: 'string', description: 'Who to greet' } } },
      run: ({ name = 'world' }, ctx) => {
        ctx.log.info('greeting', { name })
        return { greeting: \`Hello, \${name}!\` }
      }
    })
  ],
  prompts: [
    prompt({
      name: 'introduce',
      description: 'Asks the model to introduce a topic',
      arguments: [{ name: 'topic', description: 'What to introduce' }],
      get: ({ topic }) => [McpMessage.system('You explain things simply.'), McpMessage.user(\`Introduce \${topic}.\`)]
    })
  ]
})
`,
    'index.test.mjs': `// Run with: node --test
import { test } from 'node:test'
import assert from 'node:assert/strict'
import plugin from './index.mjs'

const logged = []
const ctx = { log: { debug () {}, info (msg, data) { logged.push([msg, data]) }, warn () {}, error () {} }, signal: new AbortController().signal }
const tool = (name) => plugin.tools.find((t) => t.name === name)

test('hello greets by name', async () => {
  assert.deepEqual(await tool('hello').run({ name: 'Ada' }, ctx), { greeting: 'Hello, Ada!' })
  assert.deepEqual(logged.at(-1), ['greeting', { name: 'Ada' }])
})

test('hello has a default', async () => {
  assert.deepEqual(await tool('hello').run({}, ctx), { greeting: 'Hello, world!' })
})

test('introduce builds a system and a user message', async () => {
  const messages = await plugin.prompts[0].get({ topic: 'MCP' }, ctx)
  assert.deepEqual(messages.map((m) => m.role), ['system', 'user'])
  assert.equal(messages[1].content.text, 'Introduce MCP.')
})
`,
    'README.md': `# ${name}\n\nA plugin for the agent platform. Drop this folder into a plugin directory (\`platform.plugins.dirs\`, default \`./plugins\`) and it goes live.\n\n- \`node --test\` runs its tests (uws-agent-platform must be installed in the project, or the folder inside the platform's checkout)\n- \`npx platform plugins validate .\` checks it\n`
  }
}
