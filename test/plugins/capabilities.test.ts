import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startWithPlugins, tempRoot, writePlugin, statusOf, waitFor } from './helpers.js'
import { fetchCapability } from '../../runtime/plugins/capabilities.js'

// tool names carry the plugin's name: two plugins serving one tool name would clash
const toolName = (plugin: string, tool: string): string => `${plugin.replace(/-/g, '_')}_${tool}`
const CAPS = (plugin: string): string => `import { definePlugin, tool } from 'uws-agent-platform/sdk'
export default definePlugin({ tools: [
  tool({ name: '${toolName(plugin, 'caps')}', run: (_a, ctx) => Object.keys(ctx).sort() }),
  tool({ name: '${toolName(plugin, 'kv')}', run: async ({ op, key, value, prefix }, ctx) => {
    if (op === 'put') { await ctx.kv.put(key, value); return true }
    if (op === 'get') return (await ctx.kv.get(key)) ?? null
    if (op === 'delete') return await ctx.kv.delete(key)
    return await ctx.kv.list(prefix)
  } }),
  tool({ name: '${toolName(plugin, 'fetch')}', run: async ({ url }, ctx) => { const r = await ctx.fetch(url); return { status: r.status, text: r.text, type: r.headers['content-type'] ?? null } } }),
  tool({ name: '${toolName(plugin, 'env')}', run: (_a, ctx) => ctx.env ?? null })
] })
`
function capsPlugin(
  root: string,
  name: string,
  permissions: Record<string, unknown>,
  limits?: Record<string, unknown>
): void {
  writePlugin(root, name, {
    manifest: { name, version: '1.0.0', permissions, ...(limits !== undefined ? { limits } : {}) },
    index: CAPS(name)
  })
}

// a local HTTP server standing in for the outside world
const server = createServer((req, res) => {
  const port = (server.address() as AddressInfo).port
  if (req.url === '/ok') {
    res.setHeader('content-type', 'application/json')
    res.end('{"ok":true}')
    return
  }
  if (req.url === '/big') {
    res.end('x'.repeat(2 * 1024 * 1024))
    return
  }
  if (req.url === '/big-chunked') {
    res.write('y'.repeat(800 * 1024))
    res.write('y'.repeat(800 * 1024))
    res.end()
    return
  }
  if (req.url === '/redirect-in') {
    res.statusCode = 302
    res.setHeader('location', '/ok')
    res.end()
    return
  }
  if (req.url === '/redirect-out') {
    res.statusCode = 302
    res.setHeader('location', `http://localhost:${port}/ok`)
    res.end()
    return
  }
  if (req.url === '/hang') return
  res.statusCode = 404
  res.end('nope')
})
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
t.teardown(() => {
  server.closeAllConnections()
  server.close()
})
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

process.env.PLUGIN_TEST_A = 'alpha-value'
process.env.PLUGIN_TEST_B = 'secret-b'

const root = tempRoot()
capsPlugin(root, 'alpha', { kv: true })
capsPlugin(root, 'beta', { kv: true })
capsPlugin(root, 'bare', {})
capsPlugin(root, 'netter', { net: ['127.0.0.1'] }, { timeoutMs: 500 })
capsPlugin(root, 'envy', { env: ['PLUGIN_TEST_A', 'PLUGIN_TEST_MISSING'] })
const tp = await startWithPlugins(root, {
  'platform.plugins.alpha': { sandbox: 'inline', permissions: { kv: true } },
  'platform.plugins.beta': { sandbox: 'inline', permissions: { kv: true } },
  'platform.plugins.bare': { sandbox: 'inline', permissions: { kv: true, net: ['127.0.0.1'], env: ['PLUGIN_TEST_B'] } },
  'platform.plugins.netter': { sandbox: 'inline', permissions: { net: ['127.0.0.1'] } },
  'platform.plugins.envy': { sandbox: 'inline', permissions: { env: ['PLUGIN_TEST_A', 'PLUGIN_TEST_MISSING'] } }
})
t.teardown(tp.close)
const call = async (plugin: string, tool: string, args: unknown = {}) =>
  await tp.platform.plugins.invoke(plugin, 'tool', toolName(plugin, tool), args)

t.test('only granted capabilities are present; a grant the manifest did not ask for gives nothing', async (t) => {
  for (const n of ['alpha', 'beta', 'bare', 'netter', 'envy']) t.equal(statusOf(tp, n)?.state, 'live', n)
  t.same(await call('bare', 'caps'), ['log', 'signal'])
  t.same(await call('alpha', 'caps'), ['kv', 'log', 'signal'])
  t.same(await call('netter', 'caps'), ['fetch', 'log', 'signal'])
  t.same(await call('envy', 'caps'), ['env', 'log', 'signal'])
})

t.test('kv: one namespace per plugin; one plugin can never read another', async (t) => {
  t.equal(await call('alpha', 'kv', { op: 'put', key: 'shared', value: { from: 'alpha', n: [1, 2] } }), true)
  await call('alpha', 'kv', { op: 'put', key: 'a/1', value: 1 })
  await call('alpha', 'kv', { op: 'put', key: 'a/2', value: 2 })
  t.same(await call('alpha', 'kv', { op: 'get', key: 'shared' }), { from: 'alpha', n: [1, 2] })
  t.equal(await call('beta', 'kv', { op: 'get', key: 'shared' }), null, "beta does not see alpha's key")
  t.same(await call('beta', 'kv', { op: 'list', prefix: '' }), [], 'beta lists nothing of alpha')
  await call('beta', 'kv', { op: 'put', key: 'shared', value: 'beta' })
  t.same(
    await call('alpha', 'kv', { op: 'get', key: 'shared' }),
    { from: 'alpha', n: [1, 2] },
    'beta writing the same key does not touch alpha'
  )
  t.same(await call('alpha', 'kv', { op: 'list', prefix: 'a/' }), ['a/1', 'a/2'])
  t.same(await call('alpha', 'kv', { op: 'list' }), ['a/1', 'a/2', 'shared'])
  t.equal(await call('alpha', 'kv', { op: 'delete', key: 'a/1' }), true)
  t.equal(await call('alpha', 'kv', { op: 'delete', key: 'a/1' }), false)
  // keys are stored as [plugin, key]: nothing a plugin writes can land in another's namespace
  const keys = [...tp.platform.store.db<unknown, [string, string]>('plugin-kv').getKeys({})]
  t.ok(keys.every((k) => Array.isArray(k) && (k[0] === 'alpha' || k[0] === 'beta')))
})

t.test('kv: values must be JSON and bounded; keys bounded', async (t) => {
  await t.rejects(call('alpha', 'kv', { op: 'put', key: '', value: 1 }), {
    message: 'kv: a key must be a string of 1-512 characters'
  })
  await t.rejects(call('alpha', 'kv', { op: 'put', key: 'k'.repeat(513), value: 1 }), {
    message: /a key must be a string/
  })
  await t.rejects(call('alpha', 'kv', { op: 'put', key: 'big', value: 'x'.repeat(1_100_000) }), {
    message: 'kv: the value is larger than 1048576 bytes as JSON'
  })
  t.equal(await call('alpha', 'kv', { op: 'get', key: 'big' }), null, 'nothing stored')
})

t.test('fetch: allow-listed host works; others are refused with what to grant', async (t) => {
  t.same(await call('netter', 'fetch', { url: `${origin}/ok` }), {
    status: 200,
    text: '{"ok":true}',
    type: 'application/json'
  })
  t.same(
    await call('netter', 'fetch', { url: `${origin}/redirect-in` }),
    { status: 200, text: '{"ok":true}', type: 'application/json' },
    'a redirect within the allow-list is followed'
  )
  const port = new URL(origin).port
  await t.rejects(call('netter', 'fetch', { url: `http://localhost:${port}/ok` }), {
    message: `fetch: host 'localhost:${port}' is not granted to plugin 'netter' (allowed: 127.0.0.1); declare it in plugin.json permissions.net and grant it in platform.yaml: platform.plugins.netter.permissions.net: ["127.0.0.1","localhost:${port}"]`
  })
  await t.rejects(
    call('netter', 'fetch', { url: `${origin}/redirect-out` }),
    { message: /host 'localhost:\d+' is not granted/ },
    'a redirect out of the allow-list is refused'
  )
  await t.rejects(call('netter', 'fetch', { url: 'file:///etc/passwd' }), {
    message: "fetch: only http and https URLs are allowed, got 'file:'"
  })
  await t.rejects(call('netter', 'fetch', { url: 'not a url' }), { message: "fetch: invalid URL 'not a url'" })
})

t.test('fetch: responses are size-limited and calls time out', async (t) => {
  await t.rejects(call('netter', 'fetch', { url: `${origin}/big` }), {
    message: `fetch: the response from ${origin} is larger than 1048576 bytes`
  })
  await t.rejects(
    call('netter', 'fetch', { url: `${origin}/big-chunked` }),
    { message: /larger than 1048576 bytes/ },
    'a body without content-length is cut at the limit'
  )
  await t.rejects(call('netter', 'fetch', { url: `${origin}/hang` }), {
    message: /did not answer within 500 ms|timed out after 500 ms/
  })
})

t.test('fetch capability: port-limited and wildcard entries', async (t) => {
  const f = fetchCapability('p', ['127.0.0.1:1'], 1000)
  await t.rejects(f(`${origin}/ok`), { message: /is not granted to plugin 'p'/ })
  const w = fetchCapability('p', ['*.example.com'], 1000)
  await t.rejects(w('http://example.com/'), { message: /host 'example\.com' is not granted/ })
})

t.test('env: only the named variables, only when set', async (t) => {
  t.same(await call('envy', 'env'), { PLUGIN_TEST_A: 'alpha-value' })
  t.equal(await call('bare', 'env'), null, 'granted but not asked: nothing')
})

t.test('kv survives a reload of the plugin', async (t) => {
  const { writeFileSync } = await import('node:fs')
  const { join } = await import('node:path')
  let reloaded = false
  const off = tp.platform.bus.on('PluginsChanged', (e) => {
    if (e.changed.includes('alpha')) reloaded = true
  })
  t.teardown(off)
  writeFileSync(join(root, 'alpha', 'index.js'), CAPS('alpha') + '\n// changed\n')
  await waitFor(() => reloaded && statusOf(tp, 'alpha')?.state === 'live', 'alpha reloaded')
  t.same(await call('alpha', 'kv', { op: 'get', key: 'shared' }), { from: 'alpha', n: [1, 2] })
})

t.test('the same capabilities reach a plugin in the isolate tier (its default)', async (t) => {
  const root2 = tempRoot()
  capsPlugin(root2, 'iso-a', { kv: true, net: ['127.0.0.1'], env: ['PLUGIN_TEST_A'] })
  capsPlugin(root2, 'iso-b', { kv: true })
  const tp2 = await startWithPlugins(root2, {
    'platform.plugins.iso-a': { permissions: { kv: true, net: ['127.0.0.1'], env: ['PLUGIN_TEST_A'] } },
    'platform.plugins.iso-b': { permissions: { kv: true } }
  })
  t.teardown(tp2.close)
  const c = async (plugin: string, tool: string, args: unknown = {}) =>
    await tp2.platform.plugins.invoke(plugin, 'tool', toolName(plugin, tool), args)
  t.match(statusOf(tp2, 'iso-a'), { state: 'live', sandbox: 'isolate' }, statusOf(tp2, 'iso-a')?.error ?? '')
  // (the isolate tier always offers ctx.progress, a no-op when nobody listens)
  const keys = async (p: string) => ((await c(p, 'caps')) as string[]).filter((k) => k !== 'progress')
  t.same(await keys('iso-a'), ['env', 'fetch', 'kv', 'log', 'signal'])
  t.same(await keys('iso-b'), ['kv', 'log', 'signal'])
  await c('iso-a', 'kv', { op: 'put', key: 'secret', value: 42 })
  t.equal(await c('iso-a', 'kv', { op: 'get', key: 'secret' }), 42)
  t.equal(await c('iso-b', 'kv', { op: 'get', key: 'secret' }), null, 'iso-b cannot read iso-a')
  t.same(await c('iso-b', 'kv', { op: 'list' }), [])
  t.same(await c('iso-a', 'fetch', { url: `${origin}/ok` }), {
    status: 200,
    text: '{"ok":true}',
    type: 'application/json'
  })
  await t.rejects(c('iso-a', 'fetch', { url: `http://localhost:${new URL(origin).port}/ok` }), {
    message: /is not granted to plugin 'iso-a'/
  })
  t.same(await c('iso-a', 'env'), { PLUGIN_TEST_A: 'alpha-value' })
})
