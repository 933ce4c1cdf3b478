import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../runtime/areas.js'
import { operatorGrant } from '../../runtime/plugins/grants.js'
import { parseManifest } from '../../runtime/plugins/manifest.js'
import { isPlatformError } from '../../runtime/contracts/index.js'
import { PLUGINS_ERRORS, resolveGrant } from '../../runtime/plugins/index.js'
import { type OperatorGrant } from '../../runtime/plugins/grants.js'

function grantOf(raw: Record<string, unknown>, op: OperatorGrant) {
  const { manifest, askedLimits } = parseManifest({ name: 'examples', version: '1.0.0', ...raw })
  return resolveGrant('examples', manifest, askedLimits, op)
}
function refusal(raw: Record<string, unknown>, op: OperatorGrant): string {
  try {
    grantOf(raw, op)
  } catch (e) {
    if (isPlatformError(e, PLUGINS_ERRORS.GRANT_REFUSED)) return e.message
    throw e
  }
  throw new Error('not refused')
}

t.test('nothing asked, nothing granted: isolate with default limits and no capabilities', async (t) => {
  t.same(grantOf({}, {}), {
    sandbox: 'isolate',
    permissions: { net: [], kv: false, env: [] },
    limits: { memoryMb: 64, timeoutMs: 5000, concurrency: 4 }
  })
})

t.test('kv asked without a grant is refused with what to grant', async (t) => {
  t.equal(
    refusal({ permissions: { kv: true } }, {}),
    "plugin 'examples' asks for more than it is granted (the key-value store); grant it in platform.yaml: platform.plugins.examples: {permissions: {kv: true}}"
  )
  t.same(grantOf({ permissions: { kv: true } }, { permissions: { kv: true } }).permissions.kv, true)
})

t.test('net hosts: every asked host must be granted; the message lists the full list to grant', async (t) => {
  t.equal(
    refusal(
      { permissions: { net: ['api.example.com', 'b.example.com'] } },
      { permissions: { net: ['api.example.com'] } }
    ),
    'plugin \'examples\' asks for more than it is granted (network access to b.example.com); grant it in platform.yaml (it replaces the current platform.plugins.examples grant): platform.plugins.examples: {permissions: {net: ["api.example.com", "b.example.com"]}}'
  )
  t.same(
    grantOf({ permissions: { net: ['api.example.com'] } }, { permissions: { net: ['api.example.com', 'other.com'] } })
      .permissions.net,
    ['api.example.com'],
    'only what was asked'
  )
  t.same(
    grantOf({ permissions: { net: ['a.example.com'] } }, { permissions: { net: ['*.example.com'] } }).permissions.net,
    ['a.example.com'],
    'a wildcard grant covers a subdomain'
  )
  t.match(
    refusal({ permissions: { net: ['example.com'] } }, { permissions: { net: ['*.example.com'] } }),
    /network access to example\.com/,
    'a wildcard does not cover the apex'
  )
  t.match(
    refusal({ permissions: { net: ['example.com'] } }, { permissions: { net: ['example.com:443'] } }),
    /network access to example\.com\)/,
    'a port-limited grant does not cover any port'
  )
})

t.test('env variables: each must be granted', async (t) => {
  t.equal(
    refusal({ permissions: { env: ['API_KEY', 'REGION'] } }, { permissions: { env: ['REGION'] } }),
    'plugin \'examples\' asks for more than it is granted (environment variables API_KEY); grant it in platform.yaml (it replaces the current platform.plugins.examples grant): platform.plugins.examples: {permissions: {env: ["REGION", "API_KEY"]}}'
  )
})

t.test(
  'sandbox: worker and inline only when granted; the operator may run a plugin in a more trusted tier',
  async (t) => {
    t.equal(
      refusal({ sandbox: 'worker' }, {}),
      "plugin 'examples' asks for more than it is granted (sandbox 'worker' but only 'isolate' is granted); grant it in platform.yaml: platform.plugins.examples: {sandbox: \"worker\"}"
    )
    t.match(refusal({ sandbox: 'inline' }, { sandbox: 'worker' }), /platform\.plugins\.examples: \{sandbox: "inline"\}/)
    t.equal(grantOf({ sandbox: 'worker' }, { sandbox: 'worker' }).sandbox, 'worker')
    t.equal(grantOf({ sandbox: 'worker' }, { sandbox: 'inline' }).sandbox, 'inline')
    t.equal(grantOf({}, { sandbox: 'inline' }).sandbox, 'inline', 'an isolate plugin run inline by the operator')
    t.equal(grantOf({}, { sandbox: 'worker' }).sandbox, 'worker')
  }
)

t.test('limits: min(asked, granted), the default when not asked; above the grant is refused', async (t) => {
  t.equal(
    refusal({ limits: { memoryMb: 128 } }, {}),
    "plugin 'examples' asks for more than it is granted (limits.memoryMb 128 above the granted 64); grant it in platform.yaml: platform.plugins.examples: {limits: {memoryMb: 128}}"
  )
  t.same(grantOf({ limits: { memoryMb: 128 } }, { limits: { memoryMb: 256 } }).limits, {
    memoryMb: 128,
    timeoutMs: 5000,
    concurrency: 4
  })
  t.same(
    grantOf({}, { limits: { memoryMb: 32, timeoutMs: 100 } }).limits,
    { memoryMb: 32, timeoutMs: 100, concurrency: 4 },
    'the grant caps the defaults'
  )
  t.same(grantOf({ limits: { timeoutMs: 50 } }, {}).limits.timeoutMs, 50)
  t.match(
    refusal({ limits: { concurrency: 8 } }, { limits: { concurrency: 2 } }),
    /limits\.concurrency 8 above the granted 2.*platform\.plugins\.examples: \{limits: \{concurrency: 8\}\}/
  )
})

t.test('several refusals are reported together', async (t) => {
  const m = refusal({ sandbox: 'worker', permissions: { kv: true, net: ['x.com'] } }, {})
  t.match(m, /platform\.plugins\.examples: \{sandbox: "worker", permissions: \{net: \["x\.com"\], kv: true\}\}$/)
})

t.test('the grant in the refusal, pasted as is into platform.yaml, loads the plugin', async (t) => {
  const asks = {
    sandbox: 'worker',
    permissions: { kv: true, net: ['x.com', 'api.example.com:8443'], env: ['API_KEY'] },
    limits: { memoryMb: 128 }
  }
  for (const [existing, current] of [
    ['', {}],
    ['platform:\n  server:\n    port: 9000\n', {}],
    ['platform.plugins.examples: {permissions: {net: [x.com]}}\n', { permissions: { net: ['x.com'] } }]
  ] as [string, OperatorGrant][]) {
    const line = /grant it in platform\.yaml[^:]*: (platform\.plugins\.examples: .*)$/.exec(refusal(asks, current))![1]!
    const dir = mkdtempSync(join(tmpdir(), 'grant-paste-'))
    // pasted after what the file already holds, replacing an older grant line of the same plugin
    const text = existing.startsWith('platform.plugins.examples') ? line + '\n' : existing + line + '\n'
    writeFileSync(join(dir, 'platform.yaml'), text)
    const config = loadConfig({ cwd: dir, env: {} })
    const granted = grantOf(asks, operatorGrant(config, 'examples'))
    t.same([granted.sandbox, granted.permissions.kv, granted.limits.memoryMb], ['worker', true, 128], text)
  }
})
