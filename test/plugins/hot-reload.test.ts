import t from 'tap'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startWithPlugins, tempRoot, writePlugin, toolPlugin, inlineGrants, statusOf, waitFor } from './helpers.js'
import type { PlatformEvent } from '../../runtime/events/index.js'

const versioned = (v: string) => `import { definePlugin, tool } from 'uws-agent-platform/sdk'
import { VERSION } from './version.js'
export default definePlugin({ tools: [
  tool({ name: 'fast', run: () => VERSION }),
  tool({ name: 'slow', run: async (_a, ctx) => { await new Promise((r) => setTimeout(r, 400)); return { version: VERSION, label: ${JSON.stringify(v)} } } })
] })
`

for (const tier of ['inline', 'isolate'] as const)
  t.test(`${tier} tier: add, change and remove plugins while a stream of calls keeps succeeding`, async (t) => {
    const root = tempRoot()
    writePlugin(root, 'stable', { index: toolPlugin('ping', 'pong') })
    const swapDir = writePlugin(root, 'swap', {
      index: versioned('first'),
      files: { 'version.js': "export const VERSION = 'v1'\n" }
    })
    const tp = await startWithPlugins(root, tier === 'inline' ? inlineGrants('stable', 'swap', 'added') : {})
    t.teardown(tp.close)
    const events: PlatformEvent<'PluginsChanged'>[] = []
    tp.platform.bus.on('PluginsChanged', (e) => {
      events.push(e)
    })

    const call = async (name: string, args: unknown = {}) => {
      const tool = tp.platform.plugins.tools().find((x) => x.name === name)
      if (tool === undefined) throw new Error(`tool ${name} is not listed`)
      return await tool.call(args)
    }
    t.equal(await call('fast'), 'v1')

    // a concurrent stream of calls on the stable plugin and on the one being swapped
    let running = true
    const errors: string[] = []
    let calls = 0
    const seen = new Set<unknown>()
    const stream = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (running) {
          const [ping, fast] = await Promise.allSettled([call('ping'), call('fast')])
          if (ping.status === 'rejected') errors.push(`ping: ${(ping.reason as Error).message}`)
          else if ((ping.value as { value: string }).value !== 'pong')
            errors.push(`ping answered ${JSON.stringify(ping.value)}`)
          else calls++
          if (fast.status === 'fulfilled') seen.add(fast.value)
          else if ((fast.reason as Error).message !== 'tool fast is not listed')
            errors.push(`fast: ${(fast.reason as Error).message}`)
          await new Promise((r) => setImmediate(r))
        }
      })
    )
    t.teardown(async () => {
      running = false
      await stream
    })

    // a call in flight when the plugin changes finishes on the old instance
    const inFlight = call('slow')
    await new Promise((r) => setTimeout(r, 50))
    writeFileSync(join(swapDir, 'version.js'), "export const VERSION = 'v2'\n")
    writeFileSync(join(swapDir, 'index.js'), versioned('second'))
    await waitFor(() => seen.has('v2'), 'the changed plugin to answer v2')
    t.same(await inFlight, { version: 'v1', label: 'first' }, 'the in-flight call finished on the old instance')
    t.same(
      await call('slow'),
      { version: 'v2', label: 'second' },
      'new calls run on the new instance, helper files included'
    )

    // a folder added while serving goes live
    writePlugin(root, 'added', { index: toolPlugin('added_tool', 'new') })
    await waitFor(() => statusOf(tp, 'added')?.state === 'live', 'the added plugin')
    t.same(await call('added_tool'), { value: 'new', args: {} })

    // a change that breaks the plugin: listed with its error, the others keep working
    writeFileSync(join(swapDir, 'index.js'), 'export default definePlugin({ (')
    await waitFor(() => statusOf(tp, 'swap')?.state === 'failed', 'the broken plugin to be listed as failed')
    // SyntaxError in production; esbuild's Parse error when the test process loads through tsx
    t.match(statusOf(tp, 'swap')?.error, /SyntaxError|Parse error/)
    t.equal(
      tp.platform.plugins.tools().find((x) => x.name === 'fast'),
      undefined,
      'a failed plugin contributes nothing'
    )
    const before = calls
    await waitFor(() => calls > before + 5, 'more calls')
    writeFileSync(join(swapDir, 'index.js'), versioned('third'))
    await waitFor(() => statusOf(tp, 'swap')?.state === 'live', 'the repaired plugin')

    // a removed folder disappears
    rmSync(join(root, 'added'), { recursive: true })
    await waitFor(() => statusOf(tp, 'added') === undefined, 'the removed plugin to disappear')
    t.equal(
      tp.platform.plugins.tools().find((x) => x.name === 'added_tool'),
      undefined
    )

    running = false
    await stream
    t.same(errors, [], 'the stable plugin never failed, and swaps never broke a call')
    t.ok(calls > 20, `the stream kept running (${calls} rounds)`)

    const flat = events.map((e) => ({ added: e.added, changed: e.changed, removed: e.removed }))
    t.ok(
      flat.some((e) => e.changed.includes('swap')),
      'the change was announced'
    )
    t.ok(
      flat.some((e) => e.added.includes('added')),
      'the addition was announced'
    )
    t.ok(
      flat.some((e) => e.removed.includes('added')),
      'the removal was announced'
    )
    for (const n of ['stable', 'swap']) t.equal(statusOf(tp, n)?.sandbox, tier)
  })

t.test('a swapped-out instance is disposed once its calls finish', async (t) => {
  const { PluginRegistry } = await import('../../runtime/plugins/index.js')
  const { EventBus } = await import('../../runtime/events/index.js')
  const registry = new PluginRegistry(new EventBus())
  const disposed: string[] = []
  let release!: () => void
  const gate = new Promise<void>((r) => {
    release = r
  })
  const instance = (label: string) => ({
    kind: 'inline' as const,
    descriptor: {
      tools: [{ name: 't', description: '', input: {}, longRunning: false }],
      resources: [],
      prompts: [],
      agents: [],
      policyTypes: [],
      classifiers: [],
      embedders: []
    },
    async invoke() {
      await gate
      return label
    },
    async dispose() {
      disposed.push(label)
    }
  })
  const manifest = {
    name: 'p',
    version: '1.0.0',
    entry: 'index.js',
    sandbox: 'inline' as const,
    permissions: { net: [], kv: false, env: [] },
    limits: { memoryMb: 64, timeoutMs: 5000, concurrency: 4 }
  }
  registry.set('/p', manifest, instance('old'))
  const pending = registry.tools()[0]!.call({})
  registry.set('/p', manifest, instance('new'))
  t.same(disposed, [], 'not disposed while a call is in flight')
  release()
  t.equal(await pending, 'old')
  await new Promise((r) => setImmediate(r))
  t.same(disposed, ['old'])
  t.equal(await registry.tools()[0]!.call({}), 'new')
})
