import t from 'tap'
import { mkdtempSync, writeFileSync, readFileSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CONFIG_KEYS, loadConfig } from '../../runtime/areas.js'
import { configTable } from '../../runtime/config/index.js'

const dir = mkdtempSync(join(tmpdir(), 'platform-config-'))
const file = (name: string, text: string) => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

t.test('defaults hold when nothing is given', async (t) => {
  const c = loadConfig({ env: {}, cwd: dir })
  t.equal(c.get('platform.server.port'), 8080)
  t.equal(c.get('platform.server.body-limit-bytes'), 1_048_576)
  t.equal(c.get('platform.data-dir'), './data')
  t.same(c.get('platform.plugins.dirs'), ['./plugins'])
  t.equal(c.get('platform.admin.http-write-enabled'), false)
  t.equal(c.get('platform.ai.governance.memory.min-confidence'), 0)
  t.equal(c.get('platform.interactions.demo-principal'), undefined)
})

t.test('every spec property-table key is in the schema', async (t) => {
  for (const k of [
    'platform.admin.enabled',
    'platform.admin.mcp-tools',
    'platform.admin.mcp-write-tools',
    'platform.admin.http-write-enabled',
    'platform.interactions.http-write-enabled',
    'platform.interactions.demo-principal',
    'platform.mcp-sandbox-origin',
    'platform.ai.governance.memory.enabled',
    'platform.ai.governance.memory.ttl-seconds',
    'platform.ai.governance.memory.min-confidence',
    'platform.server.port',
    'platform.server.host',
    'platform.server.body-limit-bytes',
    'platform.data-dir',
    'platform.plugins.dirs',
    'platform.auth.tokens',
    'platform.ai.governance.policy-files'
  ])
    t.ok(k in CONFIG_KEYS.keys, k)
})

t.test('nested and dotted YAML keys mix', async (t) => {
  const p = file(
    'mixed.yaml',
    'platform:\n  admin:\n    enabled: false\n  server.port: 9000\nplatform.data-dir: /tmp/x\n'
  )
  const c = loadConfig({ file: p, env: {} })
  t.equal(c.get('platform.admin.enabled'), false)
  t.equal(c.get('platform.server.port'), 9000)
  t.equal(c.get('platform.data-dir'), '/tmp/x')
  t.equal(c.file, p)
})

t.test('./platform.yaml in the working directory is read by default', async (t) => {
  const d = mkdtempSync(join(tmpdir(), 'platform-cwd-'))
  writeFileSync(join(d, 'platform.yaml'), 'platform.server.port: 7001\n')
  t.equal(loadConfig({ env: {}, cwd: d }).get('platform.server.port'), 7001)
})

t.test('precedence: defaults < file < environment < flags', async (t) => {
  const p = file('prec.yaml', 'platform.server.port: 9001\nplatform.server.host: 10.0.0.1\nplatform.log-level: debug\n')
  const env = { PLATFORM_SERVER_PORT: '9002', PLATFORM_SERVER_HOST: '127.0.0.2' }
  const c = loadConfig({ file: p, env, overrides: { 'platform.server.port': 9003 } })
  t.equal(c.get('platform.server.port'), 9003)
  t.equal(c.get('platform.server.host'), '127.0.0.2')
  t.equal(c.get('platform.log-level'), 'debug')
  t.equal(c.get('platform.server.body-limit-bytes'), 1_048_576)
})

t.test('environment values are coerced by the key type', async (t) => {
  const c = loadConfig({
    env: {
      PLATFORM_ADMIN_HTTP_WRITE_ENABLED: 'true',
      PLATFORM_PLUGINS_DIRS: 'a,b',
      PLATFORM_AI_GOVERNANCE_POLICY_FILES: '["x.yaml"]',
      PLATFORM_AI_GOVERNANCE_MEMORY_MIN_CONFIDENCE: '0.5',
      PLATFORM_AUTH_TOKENS: '[{"token":"0123456789abcdef0123","principal":"ops"}]',
      HOME: '/root'
    },
    cwd: dir
  })
  t.equal(c.get('platform.admin.http-write-enabled'), true)
  t.same(c.get('platform.plugins.dirs'), ['a', 'b'])
  t.same(c.get('platform.ai.governance.policy-files'), ['x.yaml'])
  t.equal(c.get('platform.ai.governance.memory.min-confidence'), 0.5)
  t.same(c.get('platform.auth.tokens'), [{ token: '0123456789abcdef0123', principal: 'ops' }])
})

t.test('an unknown key stops start-up naming the key', async (t) => {
  const p = file('unknown.yaml', 'platform:\n  server:\n    prot: 1\n')
  t.throws(() => loadConfig({ file: p, env: {} }), {
    code: 'PLT_ERR_CONFIG_INVALID',
    message: /unknown config key 'platform\.server\.prot'.*did you mean 'platform\.server\.port'/
  })
  t.throws(() => loadConfig({ env: { PLATFORM_SERVER_PROT: '1' }, cwd: dir }), { message: /PLATFORM_SERVER_PROT/ })
  t.throws(() => loadConfig({ env: {}, cwd: dir, overrides: { 'nope.key': 1 } }), {
    message: /unknown config key 'nope\.key'/
  })
})

t.test('an ill-typed key stops start-up naming the key and what it expects', async (t) => {
  t.throws(() => loadConfig({ file: file('bad1.yaml', 'platform.server.port: eighty\n'), env: {} }), {
    message: /config key 'platform\.server\.port' must be integer; got "eighty"/
  })
  t.throws(() => loadConfig({ file: file('bad2.yaml', 'platform.log-level: loud\n'), env: {} }), {
    message: /config key 'platform\.log-level' must be one of "trace", "debug"/
  })
  t.throws(() => loadConfig({ env: { PLATFORM_ADMIN_ENABLED: 'yes' }, cwd: dir }), {
    message: /config key 'platform\.admin\.enabled' must be boolean.*environment PLATFORM_ADMIN_ENABLED/
  })
  t.throws(() => loadConfig({ env: {}, cwd: dir, overrides: { 'platform.server.port': 70000 } }), {
    message: /platform\.server\.port' must be <= 65535.*command line/
  })
  t.throws(() => loadConfig({ file: file('bad3.yaml', 'platform.auth.tokens:\n  - principal: x\n'), env: {} }), {
    message: /platform\.auth\.tokens' at 0/
  })
  t.throws(() => loadConfig({ file: file('bad4.yaml', 'platform.plugins.examples:\n  sandbox: docker\n'), env: {} }), {
    message: /platform\.plugins\.examples' at sandbox must be one of "isolate", "worker", "inline"/
  })
})

t.test('YAML duplicate keys and custom tags are refused', async (t) => {
  t.throws(
    () => loadConfig({ file: file('dup.yaml', 'platform.server.port: 1\nplatform.server.port: 2\n'), env: {} }),
    { code: 'PLT_ERR_CONFIG_INVALID' }
  )
  t.throws(() => loadConfig({ file: file('tag.yaml', 'platform.server.host: !!js/function "x"\n'), env: {} }), {
    code: 'PLT_ERR_CONFIG_INVALID'
  })
  t.throws(
    () =>
      loadConfig({
        file: file('dotnest.yaml', 'platform.server.port: 1\nplatform:\n  server:\n    port: 2\n'),
        env: {}
      }),
    { message: /given twice/ }
  )
  t.throws(() => loadConfig({ file: join(dir, 'missing.yaml'), env: {} }), { message: /does not exist/ })
})

t.test('per-plugin grants are accepted under platform.plugins.<name>', async (t) => {
  const p = file(
    'grant.yaml',
    'platform:\n  plugins:\n    dirs: [./p]\n    examples:\n      enabled: true\n      sandbox: worker\n      permissions: { kv: true, net: [api.example.com] }\n      limits: { memoryMb: 32 }\n'
  )
  const c = loadConfig({ file: p, env: {} })
  t.same(c.get('platform.plugins.dirs'), ['./p'])
  t.same(c.get('platform.plugins.examples'), {
    enabled: true,
    sandbox: 'worker',
    permissions: { kv: true, net: ['api.example.com'] },
    limits: { memoryMb: 32 }
  })
})

t.test("README's configuration table is the one generated from the schema", async (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  t.ok(
    readme.includes(configTable(CONFIG_KEYS)),
    'run `npm run build && npm run config-docs` after changing a config-keys.ts (or runtime/config/core-keys.ts)'
  )
})

// The table must never promise a switch that does nothing: a key its owner never names is marked
// reserved for the area that will read it, and the table says so. An area's key is read in the
// area's own folder (another area may read it too, through a dependency); a core key anywhere.
t.test('every key is read by its owner or marked reserved for the area that will read it', async (t) => {
  const root = new URL('../../runtime/', import.meta.url)
  const files = (readdirSync(root, { recursive: true }) as string[]).filter(
    (f) => f.endsWith('.ts') && !f.startsWith('config/') && !f.endsWith('config-keys.ts')
  )
  const sourcesUnder = (folder: string) =>
    files
      .filter((f) => folder === '' || f.startsWith(`${folder}/`))
      .map((f) => readFileSync(new URL(f, root), 'utf8'))
      .join('\n')
  const byFolder = new Map<string, string>()
  const table = configTable(CONFIG_KEYS)
  for (const [key, def] of Object.entries(CONFIG_KEYS.keys)) {
    if (def.reservedFor !== undefined) {
      t.match(table, `| \`${key}\` |`, key)
      t.ok(
        table
          .split('\n')
          .find((row) => row.startsWith(`| \`${key}\` |`))!
          .includes(`*Reserved for the ${def.reservedFor} area`),
        `${key}: reserved in the table`
      )
    } else {
      const owner = CONFIG_KEYS.ownerOf(key)!
      const folder = owner === 'core' ? '' : owner
      if (!byFolder.has(folder)) byFolder.set(folder, sourcesUnder(folder))
      t.ok(
        byFolder.get(folder)!.includes(`'${key}'`),
        `${key} is read in runtime/${folder} (or move it to the area that reads it, or mark it reservedFor its area)`
      )
    }
  }
})

t.test('a grant may be written as dotted keys below the plugin name, in the file or on the command line', async (t) => {
  const c = loadConfig({
    env: {},
    cwd: dir,
    file: file(
      'dotted-grant.yaml',
      'platform:\n  server:\n    port: 1\nplatform.plugins.hello.sandbox: worker\nplatform.plugins.hello.permissions.net: [a.example.com]\nplatform.plugins.hello.permissions.kv: true\n'
    ),
    overrides: { 'platform.plugins.other.limits.memoryMb': 128 }
  })
  t.same(c.get('platform.plugins.hello'), { sandbox: 'worker', permissions: { net: ['a.example.com'], kv: true } })
  t.same(c.get('platform.plugins.other'), { limits: { memoryMb: 128 } })
  t.throws(
    () =>
      loadConfig({
        env: {},
        cwd: dir,
        file: file(
          'dotted-twice.yaml',
          'platform.plugins.hello: {sandbox: worker}\nplatform.plugins.hello.sandbox: inline\n'
        )
      }),
    { code: 'PLT_ERR_CONFIG_INVALID', message: /'platform\.plugins\.hello\.sandbox' is given twice/ }
  )
  t.throws(
    () =>
      loadConfig({
        env: {},
        cwd: dir,
        file: file('dotted-bad.yaml', 'platform.plugins.hello.permissions.nett: [a.com]\n')
      }),
    {
      message:
        /config key 'platform\.plugins\.hello' at permissions has unknown key 'nett' \(did you mean 'net'\?\); allowed: net, kv, env/
    }
  )
})

t.test(
  'grant mistakes name the key: plugins.dir suggests dirs, a misspelt grant key suggests the right one',
  async (t) => {
    t.throws(
      () => loadConfig({ env: {}, cwd: dir, file: file('dir.yaml', 'platform:\n  plugins:\n    dir: ./mine\n') }),
      {
        code: 'PLT_ERR_CONFIG_INVALID',
        message:
          /config key 'platform\.plugins\.dir' \(did you mean 'platform\.plugins\.dirs', the list of plugin directories\?\) is read as the grant of a plugin named 'dir'/
      }
    )
    t.throws(
      () =>
        loadConfig({
          env: {},
          cwd: dir,
          file: file('permisions.yaml', 'platform:\n  plugins:\n    hello:\n      permisions: {net: [a.com]}\n')
        }),
      {
        message:
          /config key 'platform\.plugins\.hello' has unknown key 'permisions' \(did you mean 'permissions'\?\); allowed: enabled, sandbox, permissions, limits/
      }
    )
    t.throws(
      () =>
        loadConfig({
          env: {},
          cwd: dir,
          file: file('memorymb.yaml', 'platform:\n  plugins:\n    hello: {limits: {memoryMB: 64}}\n')
        }),
      { message: /at limits has unknown key 'memoryMB' \(did you mean 'memoryMb'\?\)/ }
    )
  }
)
