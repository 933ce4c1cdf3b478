import t from 'tap'
import pino from 'pino'
import { definePlugin, policyType, deny, admit, transform } from 'uws-agent-platform/sdk'
import { startTestPlatform } from '../helpers/platform.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { aiRequest } from '../../runtime/contracts/index.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import { type Manifest } from '../../runtime/plugins/index.js'
import { installAreas } from '../../runtime/areas.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import type { Platform } from '../../runtime/platform.js'

const installGovernance = (p: Platform) => installAreas(p, [scopeArea, governanceArea])

const manifest = (name: string): Manifest => ({
  name,
  version: '1.0.0',
  entry: 'index.js',
  sandbox: 'inline',
  permissions: { net: [], kv: false, env: [] },
  limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 4 }
})
const caps = { log: pino({ level: 'silent' }) }

const v1 = definePlugin({
  policyTypes: [
    policyType({
      type: 'Word-Ban',
      description: 'bans config.word',
      evaluate: (ctx, config) =>
        String(ctx.request.message).includes(String(config.word))
          ? deny(`word-ban: '${String(config.word)}' is banned`)
          : admit()
    }),
    policyType({
      type: 'upper',
      evaluate: (ctx) => transform({ ...ctx.request, message: ctx.request.message.toUpperCase() })
    }),
    policyType({
      type: 'broken',
      evaluate: () => {
        throw new Error('plugin blew up')
      }
    }),
    policyType({
      type: 'kill-switch',
      evaluate: () => admit()
    })
  ]
})
const v2 = definePlugin({
  policyTypes: [policyType({ type: 'word-ban', evaluate: () => deny('v2 denies everything') })]
})

const tp = await startTestPlatform(
  { 'platform.log-level': 'warn' },
  {
    install: async (p) => {
      p.plugins.set('/plugins/ban', manifest('ban'), inlineInstance(v1, caps))
      await installGovernance(p)
    }
  }
)
t.teardown(tp.close)
const svc = governanceOf(tp.platform)!

t.test('plugin policy types register as factories (case-insensitive); built-in names cannot be taken', async (t) => {
  const types = svc.registry.types()
  t.same(
    types.find((x) => x.type === 'word-ban'),
    { type: 'word-ban', origin: 'plugin:ban', description: 'bans config.word' }
  )
  t.equal(svc.registry.origin('kill-switch'), 'builtin')
  t.ok(tp.logs.some((l) => String(l.msg).includes("policy type 'kill-switch' ignored")))
})

t.test('a YAML entry of a plugin type evaluates asynchronously in the plugin', async (t) => {
  const ps = svc.parse(
    'yaml',
    'yaml:plugin.yaml',
    'policies:\n  - {name: ban-foo, type: WORD-BAN, config: {word: foo}}\n  - {name: up, type: upper}\n'
  )
  svc.setSource('yaml:plugin.yaml', ps)
  const r = svc.gate.admit('t', aiRequest({ message: 'has foo' }))
  t.ok(r instanceof Promise)
  const d = await r
  t.same(d.admitted ? null : [d.reason, d.policy.name], ["word-ban: 'foo' is banned", 'ban-foo'])
  const ok = await svc.gate.admit('t', aiRequest({ message: 'fine' }))
  t.equal(ok.admitted && ok.request.message, 'FINE', 'a plugin transform replaces the request')
  const chk = await fetch(`${tp.url}/api/admin/governance/check`, {
    method: 'POST',
    body: JSON.stringify({ context: { message: 'foo!' } })
  }).then((r) => r.json())
  t.same([chk.allowed, chk.reason], [false, "word-ban: 'foo' is banned"])
})

t.test('a plugin type that throws denies (fail closed)', async (t) => {
  svc.setSource('yaml:broken.yaml', svc.parse('yaml', 'yaml:broken.yaml', 'policies:\n  - {name: b, type: broken}\n'))
  const d = await svc.gate.admit('t', aiRequest({ message: 'x' }))
  t.same(d.admitted ? null : d.policy.name, 'b')
  t.match(d.admitted ? '' : d.reason, /plugin blew up/)
  svc.removeSource('yaml:broken.yaml')
})

t.test(
  'plugin hot reload: a swapped plugin serves the next call; a removed one denies and its type is gone',
  async (t) => {
    tp.platform.plugins.set('/plugins/ban', manifest('ban'), inlineInstance(v2, caps))
    const d = await svc.gate.admit('t', aiRequest({ message: 'no foo here' }))
    t.same(d.admitted ? null : d.reason, 'v2 denies everything')
    t.notOk(svc.registry.has('upper'), 'types the new version dropped are unregistered')
    tp.platform.plugins.remove('ban')
    const gone = await svc.gate.admit('t', aiRequest({ message: 'x' }))
    t.same(gone.admitted ? null : gone.reason, "policy type 'word-ban' is not provided by any loaded plugin")
    t.notOk(svc.registry.has('word-ban'))
    t.throws(
      () => svc.parse('yaml', 'yaml:x', 'policies:\n  - {name: z, type: word-ban}\n'),
      /unknown policy type 'word-ban'/
    )
    tp.platform.plugins.set('/plugins/ban', manifest('ban'), inlineInstance(v1, caps))
    t.ok(svc.registry.has('word-ban'), 'a returning plugin registers again')
    svc.removeSource('yaml:plugin.yaml')
  }
)
