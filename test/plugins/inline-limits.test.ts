import t from 'tap'
import { startWithPlugins, tempRoot, writePlugin, statusOf } from './helpers.js'
import { pluginCallFailure } from '../../runtime/plugins/index.js'

// inline plugins share this process, so the test can watch what they do through globalThis
const g = globalThis as unknown as { inlineProbe: { running: number; max: number; aborted: number } }
g.inlineProbe = { running: 0, max: 0, aborted: 0 }

const root = tempRoot()
writePlugin(root, 'limited', {
  manifest: { name: 'limited', version: '1.0.0', sandbox: 'inline', limits: { timeoutMs: 300, concurrency: 2 } },
  index: `import { definePlugin, tool } from 'uws-agent-platform/sdk'
const probe = globalThis.inlineProbe
export default definePlugin({ tools: [
  tool({ name: 'busy', run: async () => {
    probe.running++; probe.max = Math.max(probe.max, probe.running)
    await new Promise((r) => setTimeout(r, 30))
    probe.running--
    return 'done'
  } }),
  tool({ name: 'forever', run: (_a, ctx) => new Promise(() => { ctx.signal.addEventListener('abort', () => { probe.aborted++ }) }) }),
  tool({ name: 'throws_string', run: () => { throw 'a string' } })
] })
`
})
const tp = await startWithPlugins(root, {
  'platform.plugins.limited': { sandbox: 'inline', limits: { timeoutMs: 300, concurrency: 2 } }
})
t.teardown(tp.close)
const call = (name: string, opts = {}) => tp.platform.plugins.invoke('limited', 'tool', name, {}, opts)

t.test('inline tier: at most limits.concurrency calls run at once, the rest queue', async (t) => {
  t.equal(statusOf(tp, 'limited')?.state, 'live')
  t.same(await Promise.all(Array.from({ length: 8 }, () => call('busy'))), Array(8).fill('done'))
  t.equal(g.inlineProbe.max, 2)
})

t.test('inline tier: a call over limits.timeoutMs fails with a timeout and its signal aborts', async (t) => {
  await t.rejects(call('forever'), {
    code: 'PLT_ERR_PLUGIN_CALL_FAILED',
    params: { reason: 'timeout' },
    message: "plugin 'limited' tool 'forever' timed out after 300 ms"
  })
  t.equal(g.inlineProbe.aborted, 1)
  t.equal(await call('busy'), 'done', 'the slot was released')
})

t.test('inline tier: a caller cancelling aborts the call', async (t) => {
  const ac = new AbortController()
  const p = call('forever', { signal: ac.signal })
  ac.abort()
  await t.rejects(p, { code: 'PLT_ERR_PLUGIN_CALL_FAILED', params: { reason: 'cancelled' } })
  t.equal(g.inlineProbe.aborted, 2)
})

t.test('inline tier: a thrown non-Error becomes a clear error', async (t) => {
  const err = await call('throws_string').catch((e: unknown) => e)
  t.equal(pluginCallFailure(err)?.reason, 'threw')
  t.equal((err as Error).message, "plugin 'limited' threw a non-Error value: a string")
})
