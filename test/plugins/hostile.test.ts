// The hostile-plugin corpus: every case fails inside its sandbox with a clear error (or is
// neutralised) while a stream of calls to healthy plugins keeps succeeding, and the host's memory
// comes back near its baseline afterwards.
import t, { type Test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { startTestPlatform } from '../helpers/platform.js'
import { loadIsolate } from '../../runtime/plugins/isolate/index.js'
import { loadWorker } from '../../runtime/plugins/worker/index.js'
import type { PluginCallReason } from '../../runtime/plugins/contract.js'
import { pluginCallFailure, type LoadSpec, type Manifest, type SandboxInstance } from '../../runtime/plugins/index.js'
import { type Capabilities } from '../../runtime/plugins/contract.js'
import { kvNamespace } from '../helpers/kv-capability.js'

t.setTimeout(600_000)
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

type Reason = PluginCallReason
type Expect =
  | { tier: 'isolate' | 'worker'; stage: 'load'; match: RegExp }
  | { tier: 'isolate' | 'worker'; stage: 'call'; reason: Reason | Reason[]; match: RegExp }
  | { tier: 'isolate' | 'worker'; stage: 'neutralised'; check: (t: Test, result: unknown) => void }

const clean = (t: Test, v: unknown, path = 'result'): void => {
  if (v === null || typeof v !== 'object') return
  t.equal(
    Object.getPrototypeOf(v),
    Array.isArray(v) ? Array.prototype : Object.prototype,
    `${path} has a plain prototype`
  )
  t.notOk('polluted' in v && !Object.hasOwn(v, 'polluted'), `${path} inherits nothing`)
  t.notOk(Object.hasOwn(v, '__proto__'), `${path} has no __proto__ key`)
  for (const [k, x] of Object.entries(v)) clean(t, x, `${path}.${k}`)
}

// The tier comes from this table (the operator's grant), never from the manifest's claim.
const cases: Record<string, Expect> = {
  'ctor-chain-process': { tier: 'isolate', stage: 'call', reason: 'threw', match: /process is not defined/ },
  'ctor-chain-require': { tier: 'isolate', stage: 'call', reason: 'threw', match: /require is not defined/ },
  'function-this-host': {
    tier: 'isolate',
    stage: 'call',
    reason: 'threw',
    match: /Cannot read properties of undefined/
  },
  'ctx-callback-chain': { tier: 'isolate', stage: 'call', reason: 'threw', match: /process is not defined/ },
  'stack-frames-host': {
    tier: 'isolate',
    stage: 'call',
    reason: 'threw',
    match: /no host frame reachable|process is not defined/
  },
  'host-reference-hunt': { tier: 'isolate', stage: 'call', reason: 'threw', match: /no host references reachable/ },
  'dynamic-import-fs': {
    tier: 'isolate',
    stage: 'call',
    reason: 'threw',
    match: /import\(\) is not available in the isolate sandbox/
  },
  'dynamic-import-child-process': {
    tier: 'isolate',
    stage: 'call',
    reason: 'threw',
    match: /import\(\) is not available in the isolate sandbox/
  },
  'static-import-fs': {
    tier: 'isolate',
    stage: 'load',
    match: /import 'node:fs' refused: Node built-ins are not available/
  },
  'import-escape-folder': {
    tier: 'isolate',
    stage: 'load',
    match: /import '..\/..\/plugins\/healthy\/index.js' refused: it resolves outside the plugin folder/
  },
  'import-absolute-path': { tier: 'isolate', stage: 'load', match: /import '\/etc\/passwd' refused/ },
  'import-bare-package': {
    tier: 'isolate',
    stage: 'load',
    match: /import 'lmdb' refused: bare specifiers other than 'uws-agent-platform\/sdk'/
  },
  'proto-pollution-result': {
    tier: 'isolate',
    stage: 'neutralised',
    check: (t, r) => {
      clean(t, r)
      t.equal((r as { polluted?: unknown }).polluted, undefined, 'the __proto__ payload set nothing')
      t.equal(
        ({} as Record<string, unknown>).pollutedInIsolate,
        undefined,
        "the isolate's Object.prototype is not the host's"
      )
    }
  },
  'proto-pollution-progress': { tier: 'isolate', stage: 'call', reason: 'threw', match: /progress payload sent/ },
  'sync-infinite-loop': {
    tier: 'isolate',
    stage: 'call',
    reason: 'timeout',
    match: /exceeded its time limit of 1000 ms/
  },
  // each turn chains one more promise: on a fast machine the heap limit comes before the time limit
  'microtask-loop': {
    tier: 'isolate',
    stage: 'call',
    reason: ['timeout', 'memory'],
    match: /exceeded its (time limit of 1000 ms|memory limit of 64 MB)/
  },
  'promise-recursion-loop': {
    tier: 'isolate',
    stage: 'call',
    reason: ['timeout', 'memory'],
    match: /exceeded its (time|memory) limit|out of memory/
  },
  'getter-loop-in-result': { tier: 'isolate', stage: 'call', reason: 'timeout', match: /exceeded its time limit/ },
  'timer-flood': { tier: 'isolate', stage: 'call', reason: 'threw', match: /too many pending timers \(limit 1000\)/ },
  'never-settles': { tier: 'isolate', stage: 'call', reason: 'timeout', match: /exceeded its time limit of 1000 ms/ },
  'array-fill-bomb': { tier: 'isolate', stage: 'call', reason: 'memory', match: /memory/ },
  'string-spread-bomb': {
    tier: 'isolate',
    stage: 'call',
    reason: ['memory', 'threw'],
    match: /memory|Invalid (string|array) length/
  },
  'object-keys-bomb': { tier: 'isolate', stage: 'call', reason: 'memory', match: /memory/ },
  'array-growth-bomb': { tier: 'isolate', stage: 'call', reason: 'memory', match: /memory/ },
  'string-doubling': {
    tier: 'isolate',
    stage: 'call',
    reason: ['threw', 'memory'],
    match: /Invalid string length|memory/
  },
  'stack-recursion': { tier: 'isolate', stage: 'call', reason: 'threw', match: /Maximum call stack size exceeded/ },
  'result-100mb': {
    tier: 'isolate',
    stage: 'call',
    reason: 'invalid-result',
    match: /result too large: 100.0 MB, the limit is 16.0 MB/
  },
  'result-not-json': {
    tier: 'isolate',
    stage: 'call',
    reason: 'invalid-result',
    match: /result is not a JSON value: .*circular/i
  },
  'throw-string': { tier: 'isolate', stage: 'call', reason: 'threw', match: /threw: a plain string was thrown/ },
  'throw-object': {
    tier: 'isolate',
    stage: 'call',
    reason: 'threw',
    match: /non-Error value: \{"code":42,"detail":"object thrown"\}/
  },
  'throw-undefined': { tier: 'isolate', stage: 'call', reason: 'threw', match: /plugin threw undefined/ },
  'throw-proxy': { tier: 'isolate', stage: 'call', reason: 'threw', match: /a value that cannot be described/ },
  'fetch-ungranted-host': {
    tier: 'isolate',
    stage: 'call',
    reason: 'threw',
    match: /fetch to '169.254.169.254' is not allowed \(granted: api.example.com\)/
  },
  'fetch-not-granted': { tier: 'isolate', stage: 'call', reason: 'threw', match: /ctx.fetch is not a function/ },
  'kv-other-namespace': {
    tier: 'isolate',
    stage: 'call',
    reason: 'threw',
    match: /no access to another plugin's namespace/
  },
  'lying-manifest': { tier: 'isolate', stage: 'call', reason: 'threw', match: /process is not defined/ },
  'load-time-loop': { tier: 'isolate', stage: 'load', match: /time limit/ },
  'load-time-bomb': { tier: 'isolate', stage: 'load', match: /memory/ },
  'worker-process-exit': {
    tier: 'worker',
    stage: 'call',
    reason: 'crashed',
    match: /worker died: worker exited with code: 7/
  },
  'worker-never-answers': {
    tier: 'worker',
    stage: 'call',
    reason: 'timeout',
    match: /exceeded its time limit of 1000 ms/
  },
  'worker-sync-loop': { tier: 'worker', stage: 'call', reason: 'timeout', match: /exceeded its time limit of 1000 ms/ },
  'worker-heap-growth': {
    tier: 'worker',
    stage: 'call',
    reason: 'memory',
    match: /exceeded its memory limit of 64 MB/
  },
  'worker-throws-non-error': {
    tier: 'worker',
    stage: 'call',
    reason: 'threw',
    match: /a value that cannot be described/
  },
  'worker-result-100mb': {
    tier: 'worker',
    stage: 'call',
    reason: 'invalid-result',
    match: /result too large: 100.0 MB/
  }
}

const corpus = resolve(import.meta.dirname, '../fixtures/hostile-plugins')
const tp = await startTestPlatform()
t.teardown(tp.close)
const store = tp.platform.store

/** The simplest honest fetch capability: an allow-list of host names in front of global fetch. */
function allowListFetch(hosts: string[]): NonNullable<Capabilities['fetch']> {
  return async (url, init = {}) => {
    const host = new URL(url).hostname
    if (!hosts.includes(host))
      throw new Error(`fetch to '${host}' is not allowed (granted: ${hosts.join(', ') || 'none'})`)
    const r = await fetch(url, { ...init, redirect: 'error' })
    return { status: r.status, headers: Object.fromEntries(r.headers), text: (await r.text()).slice(0, 1 << 20) }
  }
}

function specFor(dir: string, manifest: Manifest, tier: 'isolate' | 'worker'): LoadSpec {
  const caps: Capabilities = { log: tp.platform.logger }
  if (manifest.permissions.kv) caps.kv = kvNamespace(store, manifest.name)
  if (manifest.permissions.net.length > 0) caps.fetch = allowListFetch(manifest.permissions.net)
  return {
    dir,
    entry: join(dir, manifest.entry),
    manifest,
    grant: { sandbox: tier, permissions: manifest.permissions, limits: manifest.limits },
    capabilities: caps,
    metrics: tp.platform.metrics
  }
}

const manifestOf = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8')) as Manifest
const load = (spec: LoadSpec): Promise<SandboxInstance> =>
  spec.grant.sandbox === 'worker' ? loadWorker(spec) : loadIsolate(spec)

// --- healthy plugins under a steady stream of calls ---
const healthyDir = resolve(import.meta.dirname, '../fixtures/plugins/healthy')
const healthyManifest = manifestOf(healthyDir)
// The healthy isolate plugin has a sandbox process of its own: no hostile case may fail its calls.
// `mate` shares the hostile cases' pooled process (it is loaded first, with the same pool setting),
// so a case that crashes the process may fail the mate's calls in flight, only as 'crashed' naming
// the culprit, and the mate's next call must succeed. A case that holds the shared thread (a loop
// up to its time limit, a bomb until V8 aborts) delays the mate's calls: its time limit is long
// enough that the delay alone never fails them.
const healthy = [
  await loadIsolate({
    ...specFor(healthyDir, healthyManifest, 'isolate'),
    capabilities: { log: tp.platform.logger, kv: kvNamespace(store, 'healthy') },
    isolatePool: { processes: 0, pluginsPerProcess: 1 }
  }),
  await loadWorker(specFor(healthyDir, healthyManifest, 'worker'))
]
await healthy[0]!.invoke({
  kind: 'tool',
  name: 'kv_roundtrip',
  args: { key: 'secret', value: "the healthy plugin's secret" }
})
const mateSpec = specFor(healthyDir, { ...healthyManifest, name: 'healthy-mate' }, 'isolate')
const mate = await loadIsolate({
  ...mateSpec,
  grant: { ...mateSpec.grant, limits: { ...mateSpec.grant.limits, timeoutMs: 30_000 } }
})

const stream = {
  ok: 0,
  failed: [] as string[],
  stop: false,
  mateOk: 0,
  mateFailed: [] as { reason: Reason; message: string }[]
}
async function pump(inst: SandboxInstance, isMate = false): Promise<void> {
  let i = 0
  while (!stream.stop) {
    i++
    try {
      const r = await inst.invoke({ kind: 'tool', name: 'add', args: { a: i, b: 1 } })
      if (r === i + 1) {
        if (isMate) stream.mateOk++
        else stream.ok++
      } else stream.failed.push(`${inst.kind}: wrong answer ${String(r)}`)
    } catch (err) {
      if (isMate && pluginCallFailure(err) !== undefined)
        stream.mateFailed.push({ reason: pluginCallFailure(err)!.reason, message: (err as Error).message })
      else stream.failed.push(`${inst.kind}: ${(err as Error).message}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}
const pumps = [...healthy.map((h) => pump(h)), pump(mate, true)]

// baseline after the healthy plugins are warm
for (let i = 0; i < 5; i++) {
  await new Promise((resolve) => setTimeout(resolve, 20))
  gc()
}
const base = process.memoryUsage()

t.test('the corpus has at least 25 cases and every case is expected', async (t) => {
  const dirs = readdirSync(corpus).sort()
  t.ok(dirs.length >= 25, `${dirs.length} cases`)
  t.same(dirs, Object.keys(cases).sort())
})

for (const [name, expect] of Object.entries(cases)) {
  t.test(name, async (t) => {
    const dir = join(corpus, name)
    const manifest = manifestOf(dir)
    t.ok(manifest.description !== undefined && manifest.description !== '', manifest.description ?? name)
    const before = stream.ok
    const mateBefore = stream.mateOk
    stream.mateFailed = []
    const spec = specFor(dir, manifest, expect.tier)
    if (expect.stage === 'load') {
      await t.rejects(load(spec), expect.match)
    } else {
      const inst = await load(spec)
      t.teardown(() => inst.dispose())
      const progress: unknown[] = []
      try {
        const result = await inst.invoke(
          { kind: 'tool', name: 'attack', args: {} },
          { onProgress: (p) => progress.push(p) }
        )
        if (expect.stage === 'neutralised') expect.check(t, result)
        else t.fail(`expected a failure, got ${JSON.stringify(result)?.slice(0, 200)}`)
      } catch (err) {
        if (expect.stage === 'neutralised') throw err
        const failed = pluginCallFailure(err)
        t.ok(failed, 'PLUGIN_CALL_FAILED')
        const e = { ...failed!, message: (err as Error).message }
        const reasons = Array.isArray(expect.reason) ? expect.reason : [expect.reason]
        t.ok(reasons.includes(e.reason), `reason ${e.reason}`)
        t.match(e.message, expect.match)
        t.equal(e.plugin, manifest.name)
      }
      for (const p of progress) clean(t, p, 'progress')
      // the same instance recovers: a fresh isolate (and sandbox process) or a replacement thread answers
      t.equal(
        await inst.invoke({ kind: 'tool', name: 'ping', args: {} }),
        'pong',
        'the plugin answers again after the failure'
      )
    }
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'host Object.prototype untouched')
    // the healthy plugins answered during the case and still answer now
    for (const h of healthy)
      t.equal(
        await h.invoke({ kind: 'tool', name: 'add', args: { a: 20, b: 22 } }),
        42,
        `healthy ${h.kind} plugin still answers`
      )
    t.ok(stream.ok > before, 'the healthy stream kept succeeding')
    t.same(stream.failed, [], 'no healthy call failed')
    t.equal(await mate.invoke({ kind: 'tool', name: 'add', args: { a: 1, b: 2 } }), 3, 'the process-mate answers')
    for (let i = 0; i < 100 && stream.mateOk <= mateBefore; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    t.ok(stream.mateOk > mateBefore, 'the process-mate kept serving')
    for (const e of stream.mateFailed) {
      t.equal(e.reason, 'crashed', "a process-mate's call lost to the crash fails as crashed")
      t.match(
        e.message,
        new RegExp(`plugin 'healthy-mate' lost its shared sandbox process .*plugin '${manifest.name}' crashed it`)
      )
    }
  })
}

t.test('failures were counted in /metrics', async (t) => {
  const text = await (await fetch(tp.url + '/metrics')).text()
  for (const re of [
    /platform_plugin_failures_total\{plugin="hostile-sync-infinite-loop",reason="timeout"\} 1/,
    /platform_plugin_failures_total\{plugin="hostile-array-fill-bomb",reason="memory"\} 1/,
    /platform_plugin_failures_total\{plugin="hostile-worker-process-exit",reason="crashed"\} 1/,
    /platform_plugin_failures_total\{plugin="hostile-result-100mb",reason="invalid-result"\} 1/
  ])
    t.match(text, re)
})

t.test("the host's memory returns near its baseline", async (t) => {
  stream.stop = true
  await Promise.all(pumps)
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    gc()
  }
  const now = process.memoryUsage()
  const mb = (n: number): string => (n / 1048576).toFixed(1)
  t.comment(
    `heapUsed ${mb(base.heapUsed)} -> ${mb(now.heapUsed)} MB, rss ${mb(base.rss)} -> ${mb(now.rss)} MB, external ${mb(base.external)} -> ${mb(now.external)} MB`
  )
  t.ok(now.heapUsed - base.heapUsed < 16 * 1048576, 'JS heap within 16 MB of the baseline')
  t.ok(now.external - base.external < 16 * 1048576, 'external memory within 16 MB of the baseline')
  // RSS also holds what the allocator keeps after worker threads exit (100 MB results were built in them)
  t.ok(now.rss - base.rss < 200 * 1048576, 'RSS within 200 MB of the baseline')
  for (const h of [...healthy, mate]) await h.dispose()
})
