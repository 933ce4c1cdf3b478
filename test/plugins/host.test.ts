import t from 'tap'
import { rmSync } from 'node:fs'
import { Writable } from 'node:stream'
import { makeConfig } from '../../runtime/config/index.js'
import { CONFIG_KEYS } from '../../runtime/areas.js'
import { EventBus } from '../../runtime/events/index.js'
import { createLogger } from '../../runtime/observability/index.js'
import { PluginHost, PluginRegistry, lmdbPluginKv } from '../../runtime/plugins/index.js'
import { startWithPlugins, tempRoot, writePlugin, toolPlugin, inlineGrants, statusOf } from './helpers.js'

const SDK = "import { definePlugin, tool } from 'uws-agent-platform/sdk'\n"

t.test('discovery: every folder of every plugin directory; failures are listed and affect nothing else', async (t) => {
  const root = tempRoot()
  const root2 = tempRoot()
  t.teardown(() => rmSync(root2, { recursive: true, force: true }))
  writePlugin(root, 'good', { index: toolPlugin('hello', 'hi') })
  writePlugin(root2, 'second', { index: toolPlugin('second_tool', 2) })
  writePlugin(root, 'bad-manifest', {
    manifest: { name: 'bad-manifest', version: '1.0.0', limits: { memoryMb: 4 } },
    index: toolPlugin('x', 1)
  })
  writePlugin(root, 'bad-json', { manifest: '{ "name": "bad-json", ', index: toolPlugin('x', 1) })
  writePlugin(root, 'syntax', {
    index: SDK + 'export default definePlugin({ tools: [ tool({ name: "s", run: () => 1 }) ] '
  })
  writePlugin(root, 'throws', { index: SDK + "throw new Error('boom while loading')\nexport default definePlugin({})" })
  writePlugin(root, 'not-a-plugin', { index: 'export default { tools: [] }' })
  writePlugin(root, 'no-entry', {})
  writePlugin(root, 'greedy', {
    manifest: { name: 'greedy', version: '1.0.0', permissions: { kv: true, env: ['HOME'] } },
    index: toolPlugin('g', 1)
  })
  writePlugin(root, 'off', { index: toolPlugin('off_tool', 1) })
  writePlugin(root, 'twin', { manifest: { name: 'good', version: '2.0.0' }, index: toolPlugin('twin_tool', 1) })
  writePlugin(root, 'hangs', { index: SDK + 'await new Promise(() => {})\nexport default definePlugin({})' })
  writePlugin(root, '.hidden', { index: toolPlugin('hidden', 1) })

  const names = [
    'hangs',
    'good',
    'second',
    'bad-manifest',
    'syntax',
    'throws',
    'not-a-plugin',
    'no-entry',
    'greedy',
    'off'
  ]
  const tp = await startWithPlugins(
    root,
    {
      'platform.plugins.dirs': [root, root2],
      ...inlineGrants(...names),
      'platform.plugins.off': { enabled: false, sandbox: 'inline' }
    },
    { loadTimeoutMs: 3000 }
  )
  t.teardown(tp.close)

  t.equal(statusOf(tp, 'good')?.state, 'live')
  t.equal(statusOf(tp, 'second')?.state, 'live', 'a second plugin directory is scanned')
  t.same(statusOf(tp, 'good')?.contributes.tools, ['hello'])
  const failed = (n: string) => statusOf(tp, n)?.error
  t.equal(failed('bad-manifest'), "plugin.json: 'limits.memoryMb' must be >= 8")
  t.match(failed('bad-json'), /^plugin\.json: invalid JSON: /)
  // tests load through tsx, which parses the inline tier's import() too: its message is esbuild's
  t.match(failed('syntax'), /^index\.js: (SyntaxError: |Parse error )/)
  t.equal(failed('throws'), 'index.js: boom while loading')
  t.equal(failed('not-a-plugin'), 'index.js: TypeError: the entry module must default-export definePlugin({...})')
  t.equal(failed('no-entry'), "plugin.json: 'entry' names 'index.js', which does not exist in the plugin folder")
  t.equal(
    failed('greedy'),
    'plugin \'greedy\' asks for more than it is granted (the key-value store; environment variables HOME); grant it in platform.yaml (it replaces the current platform.plugins.greedy grant): platform.plugins.greedy: {sandbox: "inline", permissions: {kv: true, env: ["HOME"]}}'
  )
  t.equal(failed('hangs'), 'index.js: took longer than 3000 ms to load')
  t.equal(statusOf(tp, 'off')?.state, 'disabled')
  const twin = tp.platform.plugins.status().find((s) => s.dir.endsWith('/twin'))
  t.match(twin?.error, /already provides plugin 'good'/)
  t.notOk(
    tp.platform.plugins.status().some((s) => s.dir.endsWith('.hidden')),
    'dot folders are ignored'
  )
  for (const n of ['bad-manifest', 'syntax', 'throws']) t.equal(statusOf(tp, n)?.state, 'failed', n)
  t.same(statusOf(tp, 'syntax')?.contributes.tools, [])

  const tools = tp.platform.plugins
    .tools()
    .map((x) => x.name)
    .sort()
  t.same(tools, ['hello', 'second_tool'], 'only live plugins contribute')
  const hello = tp.platform.plugins.tools().find((x) => x.name === 'hello')!
  t.same(await hello.call({ a: 1 }), { value: 'hi', args: { a: 1 } })

  const ready = (await (await fetch(`${tp.url}/readyz`)).json()) as { checks: Record<string, string> }
  t.equal(ready.checks.plugins, 'UP')
  const metrics = await (await fetch(`${tp.url}/metrics`)).text()
  t.match(metrics, /platform_plugins\{state="live"\} 2/)
  t.match(metrics, /platform_plugins\{state="disabled"\} 1/)
  t.match(metrics, /platform_plugin_loads_total\{outcome="failed"\} \d+/)
})

t.test('a tier missing from the build fails only the plugins that need it, with a clear error', async (t) => {
  const root = tempRoot()
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  writePlugin(root, 'iso', { index: toolPlugin('a', 1) })
  writePlugin(root, 'inl', { index: toolPlugin('b', 1) })
  const registry = new PluginRegistry(new EventBus())
  const sink = new Writable({
    write(_c, _e, cb) {
      cb()
    }
  })
  const config = makeConfig({ ...CONFIG_KEYS.defaults(), 'platform.plugins.inl': { sandbox: 'inline' } })
  const { loadInline } = await import('../../runtime/plugins/index.js')
  const host = new PluginHost({
    config,
    logger: createLogger('silent', { destination: sink }),
    registry,
    capabilities: {
      logger: createLogger('silent', { destination: sink }),
      kv: lmdbPluginKv(() => {
        throw new Error('no kv')
      })
    },
    dirs: [root],
    tiers: { inline: loadInline },
    watch: false
  })
  await host.start()
  t.teardown(() => host.close())
  const iso = registry.status().find((s) => s.name === 'iso')
  t.equal(iso?.state, 'failed')
  t.equal(iso?.error, "the 'isolate' sandbox tier is not available in this build of the platform")
  t.equal(registry.status().find((s) => s.name === 'inl')?.state, 'live')
})

t.test('a missing plugin directory is not fatal and is picked up when it appears', async (t) => {
  const parent = tempRoot()
  const root = `${parent}/later`
  const tp = await startWithPlugins(parent, { 'platform.plugins.dirs': [root], ...inlineGrants('late') })
  t.teardown(tp.close)
  t.same(tp.platform.plugins.status(), [])
  writePlugin(root, 'late', { index: toolPlugin('late_tool', 1) })
  const { waitFor } = await import('./helpers.js')
  await waitFor(() => statusOf(tp, 'late')?.state === 'live', 'the late plugin')
  t.pass('loaded once the directory exists')
})

t.test('a grant for a plugin that is in no plugin directory is warned about at start-up, naming it', async (t) => {
  const root = tempRoot()
  writePlugin(root, 'weather', { index: toolPlugin('forecast', 1) })
  const tp = await startWithPlugins(root, { 'platform.plugins.wether': { sandbox: 'inline' } })
  t.teardown(tp.close)
  const w = tp.logs.find((l) => l.plugin === 'wether' && l.level === 40)
  t.match(
    w?.msg,
    /^platform\.plugins\.wether grants plugin 'wether', which is in no plugin directory \(.*\) \(did you mean 'weather'\?\)$/
  )
})
