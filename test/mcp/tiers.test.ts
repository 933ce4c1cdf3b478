import t from 'tap'
import { join, resolve } from 'node:path'
import { startMcp, modern, manifestOf } from './helpers.js'
import { loadIsolate, loadWorker, type LoadSpec, type SandboxInstance } from '../../runtime/plugins/index.js'

const fixture = resolve(import.meta.dirname, '../fixtures/plugins/healthy')

t.test('plugin tools of the isolate and worker tiers over MCP', async (t) => {
  const m = await startMcp({}, { fixtures: false })
  t.teardown(m.tp.close)
  const spec = (sandbox: 'isolate' | 'worker'): LoadSpec =>
    ({
      dir: fixture,
      entry: join(fixture, 'index.js'),
      manifest: manifestOf('healthy', { sandbox, limits: { memoryMb: 64, timeoutMs: 500, concurrency: 4 } }),
      grant: {
        sandbox,
        permissions: { net: [], kv: false, env: [] },
        limits: { memoryMb: 64, timeoutMs: 500, concurrency: 4 }
      },
      capabilities: { log: m.tp.platform.logger },
      ...(sandbox === 'isolate' ? { isolation: 'in-process' as const } : {})
    }) as LoadSpec

  for (const [kind, load] of [
    ['isolate', loadIsolate],
    ['worker', loadWorker]
  ] as const) {
    await t.test(kind, async (t) => {
      const inst: SandboxInstance = await load(spec(kind))
      m.tp.platform.plugins.set(fixture, manifestOf('healthy', { sandbox: kind }), inst)
      t.teardown(() => {
        m.tp.platform.plugins.remove('healthy')
      })
      const tools = (await modern(m.url, 'tools/list')).body.result.tools
      t.ok(tools.find((x: any) => x.name === 'word_count' && x.inputSchema.required[0] === 'text'))
      t.equal(
        tools.find((x: any) => x.name === 'add').description,
        'add',
        'a tool without a description lists its name'
      )
      let r = (await modern(m.url, 'tools/call', { name: 'word_count', arguments: { text: 'one two three' } })).body
        .result
      t.same(r.structuredContent, { words: 3 })
      r = (await modern(m.url, 'tools/call', { name: 'word_count', arguments: {} })).body.result
      t.equal(r.isError, true, 'validated before the sandbox is entered')
      r = (await modern(m.url, 'tools/call', { name: 'add', arguments: { a: 2, b: 40 } })).body.result
      t.same([r.content[0].text, r.structuredContent], ['42', 42])
      const p = await modern(
        m.url,
        'tools/call',
        { name: 'steps', arguments: { n: 3 } },
        { metaExtra: { progressToken: 'k' } }
      )
      const progress = p.events.filter((e) => e.method === 'notifications/progress').map((e) => e.params)
      t.same(
        progress.map((x) => x.progress),
        [1, 2, 3],
        'every partial, in order, before the result'
      )
      t.same(JSON.parse(progress[0].message), { step: 1, of: 3 }, 'other partials become progress messages')
      r = (await modern(m.url, 'tools/call', { name: 'loop', arguments: {} })).body.result
      t.equal(r.isError, true, 'a tool over its time limit is a tool error')
      t.equal((await modern(m.url, 'resources/read', { uri: 'healthy://readme' })).body.result.contents[0].text, 'hi')
      t.equal(
        (await modern(m.url, 'prompts/get', { name: 'greet', arguments: { who: 'x' } })).body.result.messages[0].content
          .text,
        'hello x'
      )
    })
  }
})
