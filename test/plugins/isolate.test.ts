import t from 'tap'
import { join, resolve } from 'node:path'
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { startTestPlatform } from '../helpers/platform.js'
import { loadIsolate } from '../../runtime/plugins/isolate/index.js'
import type { LoadSpec, Capabilities } from '../../runtime/plugins/index.js'
import { kvNamespace } from '../helpers/kv-capability.js'
import { tool, rejects } from './helpers.js'

const tp = await startTestPlatform()
t.teardown(tp.close)
const fixture = resolve(import.meta.dirname, '../fixtures/plugins/healthy')

function spec (dir: string, over: Partial<LoadSpec> = {}, limits: Partial<LoadSpec['grant']['limits']> = {}): LoadSpec {
  const capabilities: Capabilities = { log: tp.platform.logger, kv: kvNamespace(tp.platform.store, 'healthy'), env: { GREETING: 'hi' } }
  return {
    dir, entry: join(dir, 'index.js'),
    manifest: { name: 'healthy', version: '1.0.0', entry: 'index.js', sandbox: 'isolate', permissions: { net: [], kv: true, env: ['GREETING'] }, limits: { memoryMb: 32, timeoutMs: 2000, concurrency: 4 } },
    grant: { sandbox: 'isolate', permissions: { net: [], kv: true, env: ['GREETING'] }, limits: { memoryMb: 32, timeoutMs: 2000, concurrency: 4, ...limits } },
    capabilities, metrics: tp.platform.metrics, ...over
  }
}

for (const isolation of ['process', 'in-process'] as const) {
  t.test(`${isolation}: loads the module graph and runs every contribution kind`, async (t) => {
    const inst = await loadIsolate(spec(fixture, { isolation }))
    t.teardown(() => inst.dispose())
    t.equal(inst.kind, 'isolate')
    t.ok(inst.descriptor.tools.some((x) => x.name === 'word_count' && x.description === 'Counts words'))
    t.same(await tool(inst, 'word_count', { text: 'one two  three' }), { words: 3 })
    t.equal(await tool(inst, 'add', { a: 2, b: 3 }), 5)
    t.same(await inst.invoke({ kind: 'resource', name: 'healthy://readme', args: { uri: 'healthy://readme' } }), { text: 'hi' })
    t.same(await inst.invoke({ kind: 'prompt', name: 'greet', args: { who: 'ann' } }), [{ role: 'user', content: { type: 'text', text: 'hello ann' } }])
    await rejects(t, tool(inst, 'nope'), 'threw', /unknown tool 'nope'/)
  })

  t.test(`${isolation}: ctx carries progress, kv, env and log; fetch only when granted`, async (t) => {
    const inst = await loadIsolate(spec(fixture, { isolation }))
    t.teardown(() => inst.dispose())
    const seen: unknown[] = []
    t.same(await tool(inst, 'steps', { n: 3 }, { onProgress: (p: unknown) => seen.push(p) }), { done: 3 })
    t.same(seen, [{ step: 1, of: 3 }, { step: 2, of: 3 }, { step: 3, of: 3 }])
    const kv = await tool(inst, 'kv_roundtrip', { key: 'k1', value: { a: [1, 2] } }) as { got: unknown, keys: string[] }
    t.same(kv.got, { a: [1, 2] })
    t.ok(kv.keys.includes('k1'), 'the key is listed in the plugin namespace')
    t.same(await tool(inst, 'env'), { greeting: 'hi', hasFetch: false, hasKv: true })
    t.equal(await tool(inst, 'log'), true)
    const got: unknown[] = []
    t.same(await tool(inst, 'destructure', {}, { onProgress: (p: unknown) => got.push(p) }), { kv: 1, aborted: false }, 'ctx can be destructured')
    t.same(got, [{ p: 1 }])
    try { await tool(inst, 'echo', { big: 1n }); t.fail('BigInt args accepted') } catch (err) { t.match((err as Error).message, /arguments are not JSON/) }
  })
}

t.test('a call over its time limit fails with timeout; the isolate is recreated and counted in /metrics', async (t) => {
  const inst = await loadIsolate(spec(fixture, {}, { timeoutMs: 300 }))
  t.teardown(() => inst.dispose())
  await rejects(t, tool(inst, 'loop'), 'timeout', /exceeded its time limit of 300 ms/)
  t.equal(await tool(inst, 'add', { a: 1, b: 1 }), 2)
  await rejects(t, tool(inst, 'sleep', { ms: 5000 }), 'timeout', /time limit/)
  const metrics = await (await fetch(tp.url + '/metrics')).text()
  t.match(metrics, /platform_plugin_failures_total\{plugin="healthy",reason="timeout"\} [1-9]/)
})

t.test('cancelling through the signal fails the call and aborts ctx.signal in the plugin', async (t) => {
  const inst = await loadIsolate(spec(fixture))
  t.teardown(() => inst.dispose())
  const ac = new AbortController()
  const p = tool(inst, 'watch_abort', {}, { signal: ac.signal })
  setTimeout(() => ac.abort(), 50)
  await rejects(t, p, 'cancelled', /cancelled/)
  t.equal(await tool(inst, 'add', { a: 1, b: 2 }), 3)
})

t.test('calls beyond the concurrency limit queue', async (t) => {
  const inst = await loadIsolate(spec(fixture, {}, { concurrency: 2 }))
  t.teardown(() => inst.dispose())
  const rs = await Promise.all(Array.from({ length: 6 }, () => tool(inst, 'active', { ms: 20 }) as Promise<{ maxActive: number }>))
  t.equal(Math.max(...rs.map((r) => r.maxActive)), 2)
})

t.test('load errors name the problem', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iso-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const cases: [string, string, RegExp][] = [
    ['syntax', 'export default {', /SyntaxError/],
    ['not-plugin', 'export default 42', /definePlugin/],
    ['throws', 'throw new Error("boom at load")', /boom at load/],
    ['node-import', 'import fs from "node:fs"; export default fs', /'node:fs' refused/],
    ['bare', 'import x from "lodash"; export default x', /'lodash' refused: bare specifiers/],
    ['escape', 'import x from "../../etc/passwd.js"; export default x', /refused/],
    ['absolute', 'import x from "/etc/passwd"; export default x', /'\/etc\/passwd' refused/],
    ['loop', 'for (;;) {}', /time limit|timed out/]
  ]
  for (const [name, code, re] of cases) {
    mkdirSync(join(dir, name))
    writeFileSync(join(dir, name, 'index.js'), code)
    await t.rejects(loadIsolate(spec(join(dir, name), {}, { timeoutMs: 300 })), re, name)
  }
  await t.rejects(loadIsolate(spec(join(dir, 'missing'))), /no such file/, 'missing entry')
})
