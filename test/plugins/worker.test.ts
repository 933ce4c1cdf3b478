import t from 'tap'
import { join, resolve } from 'node:path'
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { startTestPlatform } from '../helpers/platform.js'
import { loadWorker } from '../../runtime/plugins/worker/index.js'
import type { LoadSpec, Capabilities } from '../../runtime/plugins/index.js'
import { kvNamespace } from '../helpers/kv-capability.js'
import { tool, rejects } from './helpers.js'

const tp = await startTestPlatform()
t.teardown(tp.close)
const fixture = resolve(import.meta.dirname, '../fixtures/plugins/healthy')

function spec (dir: string, limits: Partial<LoadSpec['grant']['limits']> = {}): LoadSpec {
  const capabilities: Capabilities = { log: tp.platform.logger, kv: kvNamespace(tp.platform.store, 'healthy-worker'), env: { GREETING: 'hi' } }
  const l = { memoryMb: 64, timeoutMs: 2000, concurrency: 2, ...limits }
  return {
    dir, entry: join(dir, 'index.js'),
    manifest: { name: 'healthy', version: '1.0.0', entry: 'index.js', sandbox: 'worker', permissions: { net: [], kv: true, env: ['GREETING'] }, limits: l },
    grant: { sandbox: 'worker', permissions: { net: [], kv: true, env: ['GREETING'] }, limits: l },
    capabilities, metrics: tp.platform.metrics
  }
}

const inst = await loadWorker(spec(fixture))
t.teardown(() => inst.dispose())

t.test('loads and runs every contribution kind through the shared dispatch', async (t) => {
  t.equal(inst.kind, 'worker')
  t.ok(inst.descriptor.tools.some((x) => x.name === 'word_count'))
  t.same(await tool(inst, 'word_count', { text: 'a b c' }), { words: 3 })
  t.same(await inst.invoke({ kind: 'resource', name: 'healthy://readme', args: {} }), { text: 'hi' })
  t.same(await inst.invoke({ kind: 'prompt', name: 'greet', args: { who: 'bo' } }), [{ role: 'user', content: { type: 'text', text: 'hello bo' } }])
  await rejects(t, tool(inst, 'nope'), 'threw', /unknown tool 'nope'/)
})

t.test('progress streams over the call port; kv and env come from the host grants', async (t) => {
  const seen: unknown[] = []
  t.same(await tool(inst, 'steps', { n: 3 }, { onProgress: (p: unknown) => seen.push(p) }), { done: 3 })
  t.same(seen, [{ step: 1, of: 3 }, { step: 2, of: 3 }, { step: 3, of: 3 }])
  t.same(await tool(inst, 'kv_roundtrip', { key: 'w1', value: [1, 'x'] }), { got: [1, 'x'], keys: ['w1'] })
  t.same(await tool(inst, 'env'), { greeting: 'hi', hasFetch: false, hasKv: true })
  t.equal(await tool(inst, 'log'), true)
  const got: unknown[] = []
  t.same(await tool(inst, 'destructure', {}, { onProgress: (p: unknown) => got.push(p) }), { kv: 1, aborted: false }, 'ctx can be destructured')
  t.same(got, [{ p: 1 }])
  try { await tool(inst, 'echo', { big: 1n }); t.fail('BigInt args accepted') } catch (err) { t.match((err as Error).message, /arguments are not JSON/) }
})

t.test('timeout and cancel stop the thread; the pool keeps serving', async (t) => {
  const short = await loadWorker(spec(fixture, { timeoutMs: 300 }))
  t.teardown(() => short.dispose())
  await rejects(t, tool(short, 'loop'), 'timeout', /exceeded its time limit of 300 ms/)
  t.equal(await tool(short, 'add', { a: 2, b: 2 }), 4)
  const ac = new AbortController()
  const p = tool(short, 'sleep', { ms: 10_000 }, { signal: ac.signal })
  setTimeout(() => ac.abort(), 50)
  await rejects(t, p, 'cancelled', /cancelled/)
  t.equal(await tool(short, 'add', { a: 1, b: 2 }), 3)
  t.match(await (await fetch(tp.url + '/metrics')).text(), /platform_plugin_failures_total\{plugin="healthy",reason="timeout"\} [1-9]/)
})

t.test('load errors name the problem', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wrk-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [name, code, re] of [['syntax', 'export default {', /SyntaxError/], ['not-plugin', 'export default 42', /definePlugin/], ['throws', 'throw new Error("boom at load")', /boom at load/]] as const) {
    mkdirSync(join(dir, name))
    writeFileSync(join(dir, name, 'index.js'), code)
    await t.rejects(loadWorker(spec(join(dir, name))), re, name)
  }
  await t.rejects(loadWorker(spec(join(dir, 'missing'))), /Cannot find module|not find/, 'missing entry')
})
