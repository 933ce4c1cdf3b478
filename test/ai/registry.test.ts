import t from 'tap'
import { AI, DemoRuntime, type AiRuntime } from '../../runtime/ai/index.js'
import { RuntimeRegistry } from '../../runtime/ai/runtime-registry.js'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'

function fakeRuntime(name: string, priority: number, available: boolean): AiRuntime {
  return {
    name,
    priority,
    capabilities: ['streaming'],
    models: ['m'],
    isAvailable: () => available,
    async *stream() {
      yield { type: 'done', finishReason: 'stop' }
    }
  }
}

t.test('registry: the configured runtime wins; auto picks the highest-priority available one', async (t) => {
  const add = (r: RuntimeRegistry): RuntimeRegistry => {
    r.add(new DemoRuntime())
    r.add(fakeRuntime('big', 50, false))
    r.add(fakeRuntime('mid', 20, true))
    return r
  }
  t.equal(add(new RuntimeRegistry('demo')).active()?.name, 'demo')
  t.equal(add(new RuntimeRegistry('auto')).active()?.name, 'mid', 'skips the unavailable higher one')
  t.equal(add(new RuntimeRegistry('nope')).active(), undefined, 'a missing configured runtime is not replaced silently')
  const r = add(new RuntimeRegistry('demo'))
  t.throws(() => r.add(new DemoRuntime()), /already registered/)
  t.same(
    r.list().map((x) => [x.name, x.isAvailable]),
    [
      ['demo', true],
      ['big', false],
      ['mid', true]
    ]
  )
})

t.test('registry: a runtime by name, a built-in one before a plugin one of the same name', async (t) => {
  const builtIn = fakeRuntime('shared', 1, true)
  let plugins: AiRuntime[] = []
  const r = new RuntimeRegistry('plugged', () => plugins)
  r.add(builtIn)
  // a plugin loaded later may name itself like a built-in one
  plugins = [fakeRuntime('shared', 9, true), fakeRuntime('plugged', 2, true), fakeRuntime('plugged', 3, true)]
  t.equal(r.get('shared'), builtIn)
  t.equal(r.get('plugged'), plugins[1], 'the first plugin runtime of the name')
  t.equal(r.active(), plugins[1])
  t.equal(r.get('none'), undefined)
  for (const name of ['shared', 'plugged', 'none'])
    t.equal(
      r.get(name),
      r.all().find((x) => x.name === name),
      `${name}: as the list finds it`
    )
})

t.test('the AI service lists the runtimes and the active one on a real platform', async (t) => {
  const tp = await startTestPlatform({}, { install: installAreas })
  t.teardown(tp.close)
  const ai = tp.platform.area(AI)
  t.equal(ai.activeRuntime()?.name, 'demo', 'demo by default')
  t.match(ai.runtimes(), [
    {
      name: 'demo',
      priority: 0,
      isAvailable: true,
      capabilities: ['streaming', 'tool-calling', 'cancellation', 'usage', 'system-prompt'],
      models: ['demo-1']
    },
    { name: 'openai', priority: 10, isAvailable: false, models: [] }
  ])
})

t.test('auto with an openai base URL and model selects openai', async (t) => {
  const tp = await startTestPlatform(
    {
      'platform.ai.runtime': 'auto',
      'platform.ai.openai.base-url': 'http://127.0.0.1:9/v1',
      'platform.ai.openai.model': 'gpt-x'
    },
    { install: installAreas }
  )
  t.teardown(tp.close)
  const ai = tp.platform.area(AI)
  t.equal(ai.activeRuntime()?.name, 'openai')
  t.match(
    ai.runtimes().find((r) => r.name === 'openai'),
    { isAvailable: true, models: ['gpt-x'] }
  )
})

t.test('a configured runtime nobody provides is logged as a warning and leaves none active', async (t) => {
  const tp = await startTestPlatform({ 'platform.ai.runtime': 'llama' }, { install: installAreas })
  t.teardown(tp.close)
  t.equal(tp.platform.area(AI).activeRuntime(), undefined)
  t.match(
    tp.logs.find((l) => l.runtime === 'llama'),
    { level: 40, known: ['demo', 'openai'], msg: /platform.ai.runtime names 'llama'/ }
  )
})
