import t from 'tap'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseManifest, DEFAULT_LIMITS } from '../../runtime/plugins/manifest.js'
import { isPlatformError } from '../../runtime/contracts/index.js'
import { PLUGINS_ERRORS, readManifest } from '../../runtime/plugins/index.js'
import { tempRoot } from './helpers.js'

const base = { name: 'p', version: '1.0.0' }
function errorsOf(raw: unknown): string[] {
  try {
    parseManifest(raw)
    return []
  } catch (e) {
    if (isPlatformError(e, PLUGINS_ERRORS.MANIFEST_INVALID)) return e.params.errors as string[]
    throw e
  }
}

t.test('defaults: isolate, default limits, no permissions, entry index.js', async (t) => {
  const { manifest, askedLimits } = parseManifest(base)
  t.same(manifest, {
    name: 'p',
    version: '1.0.0',
    entry: 'index.js',
    sandbox: 'isolate',
    permissions: { net: [], kv: false, env: [] },
    limits: { memoryMb: 64, timeoutMs: 5000, concurrency: 4 }
  })
  t.same(askedLimits, {})
  t.same(DEFAULT_LIMITS, { memoryMb: 64, timeoutMs: 5000, concurrency: 4 })
})

t.test('a full manifest is kept as written', async (t) => {
  const m = {
    name: 'examples',
    version: '1.2.3-beta.1',
    description: 'd',
    entry: 'src/main.js',
    sandbox: 'worker',
    permissions: { net: ['api.example.com', '*.example.org', '127.0.0.1:8080'], kv: true, env: ['API_KEY'] },
    limits: { memoryMb: 128, timeoutMs: 100, concurrency: 2 }
  }
  const { manifest, askedLimits } = parseManifest(m)
  t.same(manifest, m)
  t.same(askedLimits, m.limits)
})

t.test('errors name the field', async (t) => {
  const cases: [unknown, string][] = [
    [{ ...base, limits: { memoryMb: 4 } }, "plugin.json: 'limits.memoryMb' must be >= 8"],
    [{ ...base, limits: { timeoutMs: 0 } }, "plugin.json: 'limits.timeoutMs' must be >= 1"],
    [{ ...base, limits: { concurrency: 2.5 } }, "plugin.json: 'limits.concurrency' must be an integer"],
    [{ version: '1.0.0' }, "plugin.json: 'name' is required"],
    [{ name: 'p' }, "plugin.json: 'version' is required"],
    [{ ...base, name: 'Bad Name' }, "plugin.json: 'name' must be 1-64 of a-z 0-9 _ - starting with a letter or digit"],
    [{ ...base, version: 'one' }, "plugin.json: 'version' must be a semantic version like '1.0.0'"],
    [{ ...base, sandbox: 'vm' }, 'plugin.json: \'sandbox\' must be one of "isolate", "worker", "inline"'],
    [
      { ...base, permissions: { net: ['http://x.com/path'] } },
      "plugin.json: 'permissions.net.0' must be a host name ('api.example.com', '*.example.com', 'host:port')"
    ],
    [{ ...base, permissions: { kv: 'yes' } }, "plugin.json: 'permissions.kv' must be a boolean"],
    [
      { ...base, permissions: { env: ['A-B'] } },
      "plugin.json: 'permissions.env.0' must be an environment variable name (A-Z a-z 0-9 _)"
    ],
    [{ ...base, permissions: { fs: true } }, "plugin.json: 'permissions.fs' is not a known field"],
    [{ ...base, extra: 1 }, "plugin.json: 'extra' is not a known field"],
    [
      { ...base, entry: '../outside.js' },
      "plugin.json: 'entry' must be a path inside the plugin folder, got '../outside.js'"
    ],
    [[], "plugin.json: '(root)' must be an object"],
    [{ ...base, name: 'dirs' }, "plugin.json: 'name' 'dirs' is reserved"]
  ]
  for (const [raw, msg] of cases) t.same(errorsOf(raw), [msg], msg)
})

t.test('every problem is reported, not only the first', async (t) => {
  const errs = errorsOf({ name: 'X', limits: { memoryMb: 1, concurrency: 0 } })
  t.ok(errs.includes("plugin.json: 'version' is required"))
  t.ok(errs.some((e) => e.startsWith("plugin.json: 'name'")))
  t.ok(errs.includes("plugin.json: 'limits.memoryMb' must be >= 8"))
  t.ok(errs.includes("plugin.json: 'limits.concurrency' must be >= 1"))
})

t.test('readManifest: missing file, bad JSON, missing entry', async (t) => {
  const root = tempRoot()
  t.teardown(() => {
    rmSync(root, { recursive: true, force: true })
  })
  const none = join(root, 'none')
  mkdirSync(none)
  t.throws(() => readManifest(none), { message: 'plugin.json is missing' })
  const bad = join(root, 'bad')
  mkdirSync(bad)
  writeFileSync(join(bad, 'plugin.json'), '{"name": ')
  t.throws(() => readManifest(bad), { message: /^plugin\.json: invalid JSON: / })
  const noEntry = join(root, 'noentry')
  mkdirSync(noEntry)
  writeFileSync(join(noEntry, 'plugin.json'), JSON.stringify(base))
  t.throws(() => readManifest(noEntry), {
    message: "plugin.json: 'entry' names 'index.js', which does not exist in the plugin folder"
  })
  const huge = join(root, 'huge')
  mkdirSync(huge)
  writeFileSync(join(huge, 'plugin.json'), JSON.stringify({ ...base, description: 'x'.repeat(70_000) }))
  t.throws(() => readManifest(huge), { message: 'plugin.json: larger than 65536 bytes' })
  writeFileSync(join(noEntry, 'index.js'), 'export default 1')
  t.equal(readManifest(noEntry).entryPath, join(noEntry, 'index.js'))
})
