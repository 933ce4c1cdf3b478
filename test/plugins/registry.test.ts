import t from 'tap'
import { EventBus } from '../../runtime/events/index.js'
import { PluginRegistry, type SandboxInstance } from '../../runtime/plugins/index.js'

const manifest = (name: string) => ({
  name,
  version: '1.0.0',
  entry: 'index.js',
  sandbox: 'inline' as const,
  permissions: { net: [], kv: false, env: [] },
  limits: { memoryMb: 64, timeoutMs: 5000, concurrency: 4 }
})
const instance = (tool: string): SandboxInstance => ({
  kind: 'inline',
  descriptor: {
    tools: [{ name: tool, description: '', input: {}, longRunning: false }],
    resources: [],
    prompts: [],
    agents: [],
    policyTypes: [],
    classifiers: [],
    embedders: []
  },
  async invoke() {
    return tool
  },
  async dispose() {}
})

t.test('views are built once per change, frozen, and rebuilt after a change', async (t) => {
  const r = new PluginRegistry(new EventBus())
  r.set('/a', manifest('a'), instance('ta'))
  const v1 = r.tools()
  t.equal(r.tools(), v1, 'the same array until something changes')
  t.ok(Object.isFrozen(v1))
  t.throws(() => {
    ;(v1 as unknown[]).push(1)
  })
  r.set('/b', manifest('b'), instance('tb'))
  t.not(r.tools(), v1)
  t.same(
    r.tools().map((x) => x.name),
    ['ta', 'tb']
  )
  r.setFailed('a', '/a', 'broken')
  t.same(
    r.tools().map((x) => x.name),
    ['tb']
  )
  r.remove('b')
  t.same(r.tools(), [])
})

t.test('listeners of PluginsChanged already see the new state', async (t) => {
  const bus = new EventBus()
  const r = new PluginRegistry(bus)
  const seen: string[] = []
  bus.on('PluginsChanged', () => {
    seen.push(
      r
        .status()
        .map((s) => `${s.name}:${s.state}`)
        .join(',') +
        '|' +
        r
          .tools()
          .map((x) => x.name)
          .join(',')
    )
  })
  r.set('/a', manifest('a'), instance('ta'))
  r.setDisabled('a', '/a', manifest('a'))
  r.setFailed('a', '/a', 'x')
  r.remove('a')
  t.same(seen, ['a:live|ta', 'a:disabled|', 'a:failed|', '|'])
})
