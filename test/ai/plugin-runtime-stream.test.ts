import t from 'tap'
import { rmSync } from 'node:fs'
import { AI } from '../../runtime/ai/index.js'
import { installAreas } from '../../runtime/areas.js'
import { STREAM_WINDOW } from '../../runtime/plugins/runtime-streams.js'
import { startTestPlatform } from '../helpers/platform.js'
import { tempRoot, writePlugin } from '../plugins/helpers.js'
import { agentSocket, deltas, eventually, untilTerminal } from './agent-clients.js'

// A plugin runtime over the real agent endpoint, in each tier: its events must reach the client as
// the plugin yields them, cancel must close its generator, and a flood must wait for the client.
const source = (p: string): string => `import { definePlugin, agent, runtime } from 'uws-agent-platform/sdk'
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
export default definePlugin({
  agents: [agent({ name: '${p}-agent', model: '${p}-rt', systemPrompt: 'stream' })],
  runtimes: [runtime({
    name: '${p}-rt', capabilities: ['streaming', 'cancellation'], models: ['${p}-m'],
    async * stream (req, ctx) {
      const m = req.message
      if (m === 'wait') {
        yield { type: 'text', delta: 'first ' }
        // goes on only once the test, having seen 'first' on its socket, says so
        while ((await ctx.kv.get('go')) !== true) await sleep(10)
        yield { type: 'text', delta: 'second' }
        yield { type: 'done' }
      } else if (m === 'flood') {
        let n = 0
        try {
          for (;;) { n++; yield { type: 'text', delta: 'x' } }
        } finally {
          await ctx.kv.put('flood-closed', n)
        }
      } else if (m === 'throw') {
        yield { type: 'text', delta: 'partial ' }
        throw new Error('model fell over')
      } else if (m === 'cheat') {
        // around the pull: sends far more than it was allowed, then returns nothing
        for (let i = 0; i < 1000; i++) ctx.progress({ type: 'text', delta: 'y' })
        return
      } else if (m === 'hang') {
        yield { type: 'text', delta: 'partial ' }
        await new Promise(() => {})
      } else {
        yield { type: 'text', delta: 'echo ' + m }
        yield { type: 'done' }
      }
    }
  })]
})
`

const TIERS = ['isolate', 'worker', 'inline'] as const
const root = tempRoot('ai-runtime-stream-')
const grants: Record<string, unknown> = {}
for (const sandbox of TIERS) {
  const name = `stream-${sandbox}`
  writePlugin(root, name, {
    manifest: {
      name,
      version: '1.0.0',
      sandbox,
      permissions: { kv: true },
      limits: { timeoutMs: 3000 }
    },
    index: source(name)
  })
  grants[`platform.plugins.${name}`] = { sandbox, permissions: { kv: true } }
}

t.test('plugin runtimes stream over the agent WebSocket', async (t) => {
  const tp = await startTestPlatform({ 'platform.plugins.dirs': [root], ...grants }, { install: installAreas })
  t.teardown(async () => {
    await tp.close()
    rmSync(root, { recursive: true, force: true })
  })
  const kv = tp.platform.store.db<unknown, [string, string]>('plugin-kv')
  const ai = tp.platform.area(AI)
  const streams = tp.platform.plugins.runtimeStreams

  for (const sandbox of TIERS) {
    const p = `stream-${sandbox}`
    t.test(`${sandbox} tier`, async (t) => {
      const s = await agentSocket(tp.url, `/platform/agent/${p}-agent`)
      t.teardown(() => s.ws.close())

      t.test('the first delta reaches the client while the runtime is still running', async (t) => {
        await kv.put([p, 'go'], false)
        s.ws.send('wait')
        const first = await s.inbox.next((f) => f.event === 'text-delta', 10_000)
        t.equal(first.data.text, 'first ')
        // the runtime cannot finish before this: it waits for 'go', which needs the delta above
        t.equal(s.inbox.all.filter((f) => f.event === 'complete').length, 0, 'not complete yet')
        await kv.put([p, 'go'], true)
        const rest = await untilTerminal(s.inbox)
        t.equal(first.data.text + deltas(rest), 'first second')
        t.match(rest.at(-1), { event: 'complete' })
      })

      t.test('cancel mid-stream closes the plugin generator; a flood waits for the client', async (t) => {
        await kv.remove([p, 'flood-closed'])
        s.ws.send('flood')
        const first = await s.inbox.next((f) => f.event === 'text-delta', 10_000)
        s.ws.send('{"type":"cancel"}')
        const rest = await untilTerminal(s.inbox)
        const delivered = (first.data.text as string).length + deltas(rest).length
        t.match(rest.at(-1), { type: 'error', data: /cancelled/ }, 'the turn ends cancelled')
        await eventually(() => kv.get([p, 'flood-closed']) !== undefined, 5000, 'the generator finally ran')
        const produced = kv.get([p, 'flood-closed']) as number
        t.ok(produced >= delivered, `the plugin produced ${produced} deltas, the client got ${delivered}`)
        // the host pulls: the plugin can run ahead of the client by about one window, never more
        t.ok(
          produced <= delivered + 2 * STREAM_WINDOW + 2,
          `${produced} produced is within two windows of ${delivered} delivered`
        )
      })

      t.test('a reader that stops reading the turn closes the plugin generator (no signal)', async (t) => {
        await kv.remove([p, 'flood-closed'])
        const turn = ai.runTurn({ agent: `${p}-agent`, message: 'flood' })[Symbol.asyncIterator]()
        t.match((await turn.next()).value, { type: 'text', delta: 'x' })
        t.same(await turn.return!(undefined), { done: true, value: undefined })
        await eventually(() => kv.get([p, 'flood-closed']) !== undefined, 5000, 'the generator finally ran')
        t.equal(ai.inFlight(), 0)
      })

      t.test('a throwing or hanging runtime is a clean turn error after its deltas; the host goes on', async (t) => {
        s.ws.send('throw')
        const thrown = await untilTerminal(s.inbox)
        t.equal(deltas(thrown), 'partial ')
        t.match(thrown.at(-1), { type: 'error', data: /model fell over/ })
        s.ws.send('hang')
        const hung = await untilTerminal(s.inbox, 15_000)
        t.equal(deltas(hung), 'partial ')
        t.match(hung.at(-1), { type: 'error', data: /(time limit of|timed out after) 3000 ms/ })
        const again = await s.turn('hello')
        t.equal(deltas(again), 'echo hello')
      })

      t.test('a plugin that sends beyond its allowance ends its turn with an error', async (t) => {
        const frames = await s.turn('cheat')
        t.ok(deltas(frames).length <= STREAM_WINDOW, `at most one window reached the client (${deltas(frames).length})`)
        t.match(frames.at(-1), { type: 'error', data: /sent more runtime events than the host asked for/ })
        t.equal(deltas(await s.turn('hello')), 'echo hello', 'the next turn is served')
      })
    })
  }

  t.test('no stream or turn is left behind', async (t) => {
    await eventually(() => streams.size === 0 && ai.inFlight() === 0, 5000, 'streams and turns back to 0')
    t.pass('streams and in-flight turns back to zero')
  })
})
