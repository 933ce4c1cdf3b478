import t from 'tap'
import { rmSync } from 'node:fs'
import { AI } from '../../runtime/ai/index.js'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'
import { tempRoot, writePlugin } from '../plugins/helpers.js'
import { collect, runRuntimeContract } from './runtime-contract.js'

// a plugin runtime: echoes word by word, calls the first tool it is given
const ECHO = `import { definePlugin, runtime } from 'uws-agent-platform/sdk'
export default definePlugin({ runtimes: [
  runtime({
    name: 'echo', priority: 5, capabilities: ['streaming', 'tool-calling', 'cancellation', 'usage'], models: ['echo-1'],
    async * stream (req) {
      const tools = req.tools ?? []
      if (tools.length > 0) {
        yield { type: 'tool-call', call: { id: 'call_1', name: tools[0].name, arguments: { q: req.message } } }
        yield { type: 'usage', usage: { input: 3, output: 1 } }
        yield { type: 'done' }
        return
      }
      const words = String(req.message ?? '').split(' ')
      for (const w of words) yield { type: 'text', delta: w + ' ' }
      yield { type: 'usage', usage: { input: words.length, output: words.length, model: 'echo-1' } }
      yield { type: 'done', finishReason: 'stop' }
    }
  }),
  runtime({ name: 'broken', stream: () => [{ type: 'text', delta: 'a' }, { type: 'nonsense' }] }),
  runtime({ name: 'thrower', stream: () => { throw new Error('no model loaded') } })
] })
`

// the same plugin in each tier: events stream the same way in all three
for (const sandbox of ['isolate', 'worker', 'inline'] as const) {
  t.test(`${sandbox} tier`, async (t) => {
    const root = tempRoot('ai-runtime-')
    writePlugin(root, 'echo-runtime', { manifest: { name: 'echo-runtime', version: '1.0.0', sandbox }, index: ECHO })
    const grant = sandbox === 'isolate' ? {} : { 'platform.plugins.echo-runtime': { sandbox } }
    const tp = await startTestPlatform(
      { 'platform.plugins.dirs': [root], 'platform.ai.runtime': 'auto', ...grant },
      { install: installAreas }
    )
    t.teardown(async () => {
      await tp.close()
      rmSync(root, { recursive: true, force: true })
    })
    const ai = tp.platform.area(AI)
    runRuntimeContract(t, 'echo', async () => ({
      runtime: ai.runtime('echo')!,
      text: { message: 'hello plugin world' },
      tool: { message: 'look it up', tools: [{ name: 'lookup', inputSchema: { type: 'object' } }] },
      long: { message: 'a b c d e f g h i j k l m n o p' },
      toolNames: ['lookup']
    }))

    t.test('plugin runtimes are listed from the sandbox, and auto picks the best available', async (t) => {
      t.match(
        ai.runtimes().find((r) => r.name === 'echo'),
        {
          priority: 5,
          isAvailable: true,
          capabilities: ['streaming', 'tool-calling', 'cancellation', 'usage'],
          models: ['echo-1']
        }
      )
      t.equal(tp.platform.plugins.runtimes().find((r) => r.name === 'echo')?.plugin, 'echo-runtime')
      t.match(
        tp.platform.plugins.status().find((p) => p.name === 'echo-runtime'),
        { sandbox, state: 'live', contributes: { runtimes: ['echo', 'broken', 'thrower'] } }
      )
      t.equal(ai.activeRuntime()?.name, 'echo', 'priority 5 beats demo (0); openai is unconfigured')
    })

    t.test('a plugin runtime that breaks the contract or throws ends in one clean error event', async (t) => {
      // events stream as they come: the good delta before the broken event has already gone on
      t.match(await collect(ai.runtime('broken')!.stream({ message: 'x' })), [
        { type: 'text', delta: 'a' },
        {
          type: 'error',
          code: 'protocol',
          message:
            /plugin runtime 'broken' \(plugin echo-runtime\) broke the runtime contract: event 1 is not a runtime event/
        }
      ])
      t.match(await collect(ai.runtime('thrower')!.stream({ message: 'x' })), [
        { type: 'error', code: 'runtime', message: /plugin runtime 'thrower' .*failed: .*no model loaded/ }
      ])
    })
  })
}

t.test('sdk runtime(): required fields, defaults, and the descriptor the host sees', async (t) => {
  const { definePlugin, runtime } = await import('uws-agent-platform/sdk')
  const { describePlugin } = await import('uws-agent-platform/sdk/dispatch')
  t.throws(() => runtime({ stream: () => [] } as never), { message: "runtime: 'name' must be a string" })
  t.throws(() => runtime({ name: 'r' } as never), { message: "runtime 'r': 'stream' must be a function" })
  t.throws(() => runtime({ name: 'r', capabilities: 'streaming', stream: () => [] } as never), {
    message: "runtime 'r': 'capabilities' must be an array"
  })
  t.throws(
    () => definePlugin({ runtimes: [{ name: 'r', stream: () => [] }] } as never),
    /runtimes\[0\] must be made with runtime/
  )
  const d = describePlugin(definePlugin({ runtimes: [runtime({ name: 'r', stream: () => [] })] }))
  t.same(d.runtimes, [{ name: 'r', description: '', priority: 0, capabilities: ['streaming'], models: [] }])
})
