import t, { type Test } from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AI, type TurnEvent, type TurnRequest } from '../../runtime/ai/index.js'
import { installAreas } from '../../runtime/areas.js'
import { ConcurrencyLimitPolicy } from '../../runtime/governance/types/index.js'
import { GOVERNANCE } from '../../runtime/governance/index.js'
import { type GovernancePolicy, type PolicyContext } from '../../runtime/contracts/index.js'
import { PREAMBLE_HEADING } from '../../runtime/scope/preamble.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

// a test plugin in the isolate tier: an agent with a tool a rule denies and one that never returns
const pluginsRoot = mkdtempSync(join(tmpdir(), 'turn-plugins-'))
t.teardown(() => rmSync(pluginsRoot, { recursive: true, force: true }))
mkdirSync(join(pluginsRoot, 'toolbox'))
writeFileSync(
  join(pluginsRoot, 'toolbox', 'plugin.json'),
  JSON.stringify({ name: 'toolbox', version: '1.0.0', entry: 'index.js', sandbox: 'isolate' })
)
writeFileSync(
  join(pluginsRoot, 'toolbox', 'index.js'),
  `import { definePlugin, agent, tool } from 'uws-agent-platform/sdk'
export default definePlugin({
  agents: [agent({
    name: 'scripted',
    systemPrompt: 'Be scripted.',
    run: ({ message, systemPrompt, history }) =>
      message === 'bad' ? 42 : 'scripted: ' + message + ' / ' + systemPrompt + ' / ' + history.length
  }), agent({ name: 'on-demo', model: 'demo' }), agent({ name: 'on-big', model: 'big-model' }), agent({
    name: 'streamer',
    systemPrompt: 'Stream.',
    run: async ({ message }, ctx) => {
      ctx.progress({ text: 'one ' })
      ctx.progress({ step: 'not text' })
      ctx.progress({ text: 'two ' })
      if (message === 'wait') {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
        return 'never'
      }
      return message === 'all streamed' ? undefined : 'three'
    }
  }), agent({
    name: 'toolbox',
    systemPrompt: 'You run tools.',
    tools: [
      tool({ name: 'secret_lookup', description: 'Looks up secret values', run: () => 'classified' }),
      tool({ name: 'stall', description: 'Stalls forever', run: () => { for (;;) {} } })
    ]
  })]
})
`
)

async function collect(it: AsyncIterable<TurnEvent>, onEvent?: (e: TurnEvent) => void): Promise<TurnEvent[]> {
  const out: TurnEvent[] = []
  for await (const e of it) {
    out.push(e)
    onEvent?.(e)
  }
  return out
}

function terminal(t: Test, events: TurnEvent[]): TurnEvent {
  const ends = events.filter((e) => e.type === 'complete' || e.type === 'error')
  t.equal(ends.length, 1, 'exactly one terminal event')
  t.equal(events[events.length - 1], ends[0], 'the terminal event is last')
  return ends[0]!
}

const policy = (name: string, evaluate: GovernancePolicy['evaluate']): GovernancePolicy => ({
  name,
  source: `code:${name}`,
  version: '1',
  className: 'TestPolicy',
  evaluate
})
const isTurn = (ctx: PolicyContext): boolean => ctx.request.metadata.action !== 'call_tool'

t.test('turns over the demo runtime', async (t) => {
  const tp: TestPlatform = await startTestPlatform(
    {
      'platform.plugins.dirs': [join(REPO, 'plugins'), pluginsRoot],
      'platform.plugins.toolbox': { limits: { timeoutMs: 300 } },
      'platform.ai.governance.kill-switch.enabled': true,
      'platform.log-level': 'info'
    },
    { install: installAreas }
  )
  t.teardown(tp.close)
  const ai = tp.platform.area(AI)
  const gov = tp.platform.area(GOVERNANCE)
  const turn = async (req: TurnRequest, signal?: AbortSignal): Promise<TurnEvent[]> =>
    await collect(ai.runTurn(req, signal))
  // oldest first: the pre-admission entry of a turn comes before its post-response one
  const logged = (name: string) =>
    gov.decisionLog
      .recent(200)
      .filter((e) => e.policy_name === name)
      .reverse()

  t.test('the demo agent calls platform_fact in its isolate and answers from it', async (t) => {
    const events = await turn({ agent: 'demo', message: 'How do sandboxes work?' })
    const end = terminal(t, events)
    t.match(
      events.find((e) => e.type === 'tool-start'),
      { call: { name: 'platform_fact', arguments: { topic: 'sandbox' } } }
    )
    t.match(
      events.find((e) => e.type === 'tool-result'),
      { name: 'platform_fact', content: /isolate/ }
    )
    t.ok(
      events.some((e) => e.type === 'usage'),
      'usage reported'
    )
    t.match(end, { type: 'complete', text: /According to platform_fact: .*isolate/ })
  })

  t.test('a text sink gets the deltas in the order of the events, counted, and nothing else changes', async (t) => {
    const texts = async (): Promise<number> =>
      (await tp.platform.metrics.registry.getSingleMetric('platform_ai_streaming_texts_total')!.get()).values[0]!.value
    const req = { agent: 'demo', message: 'How do sandboxes work?' }
    const plain = (await turn(req)).map((e) => (e.type === 'text' ? `text:${e.delta}` : e.type))
    const before = await texts()
    const log: string[] = []
    for await (const e of ai.runTurn(req, undefined, (delta) => {
      log.push(`text:${delta}`)
    })) {
      t.not(e.type, 'text', 'no text event beside the sink')
      log.push(e.type)
    }
    t.same(log, plain, 'tool frames, deltas, usage and the terminal event in the same order')
    t.ok(plain.indexOf('tool-result') < plain.findIndex((x) => x.startsWith('text:')), 'the answer follows the tool')
    t.equal((await texts()) - before, plain.filter((x) => x.startsWith('text:')).length, 'every delta counted once')
    // the complete event still carries the whole answer the sink got
    const sunk: string[] = []
    const end = terminal(
      t,
      await collect(
        ai.runTurn(req, undefined, (d) => {
          sunk.push(d)
        })
      )
    )
    t.match(end, { type: 'complete', text: sunk.join('') })
  })

  t.test('a text sink that answers a promise holds the turn until it settles', async (t) => {
    const got: string[] = []
    let release: (() => void) | undefined
    let done = false
    const turned = collect(
      ai.runTurn({ message: 'one two three four' }, undefined, (d) => {
        got.push(d)
        return new Promise<void>((r) => (release = r))
      })
    ).then((events) => {
      done = true
      return events
    })
    const loopTurn = (): Promise<unknown> => new Promise((r) => setImmediate(r))
    while (got.length === 0) await loopTurn()
    // the demo runtime says a word per loop turn: five turns would be five more deltas
    for (let i = 0; i < 5; i++) await loopTurn()
    t.equal(got.length, 1, 'no delta after the first until its promise settles')
    while (!done) {
      const r = release
      release = undefined
      r?.()
      await loopTurn()
    }
    t.ok(got.length > 4, `every delta came once released (${got.length})`)
    t.match(terminal(t, await turned), { type: 'complete', text: got.join('') })
  })

  t.test('guardrails run before policies: a policy sees the guardrail-modified request', async (t) => {
    gov.addGuardrail({
      name: 'redact',
      inspectRequest: (r) =>
        r.message.includes('4111')
          ? { result: 'modify', request: { ...r, message: r.message.replace('4111', '[card]') } }
          : { result: 'pass' }
    })
    gov.setSource('t', [
      policy('no-cards', (c) =>
        isTurn(c) && c.request.message.includes('4111')
          ? { decision: 'deny', reason: 'card number' }
          : { decision: 'admit' }
      )
    ])
    t.teardown(() => gov.removeSource('t'))
    t.match(terminal(t, await turn({ message: 'my card 4111 please' })), {
      type: 'complete',
      text: /You said: "my card \[card\] please"/
    })
    t.match(logged('redact')[0], { decision: 'transform' })
    t.match(logged('no-cards')[0], { decision: 'admit' })
  })

  t.test('a deny ends the turn with the policy reason, recorded', async (t) => {
    gov.setSource('t', [
      policy('no-cake', (c) =>
        isTurn(c) && /cake/.test(c.request.message)
          ? { decision: 'deny', reason: 'no cake talk' }
          : { decision: 'admit' }
      )
    ])
    t.teardown(() => gov.removeSource('t'))
    const events = await turn({ message: 'tell me about cake' })
    t.match(terminal(t, events), { type: 'error', code: 'denied', policy: 'no-cake', message: /no cake talk/ })
    t.notOk(
      events.some((e) => e.type === 'text'),
      'the model never ran'
    )
    t.match(logged('no-cake')[0], { decision: 'deny', reason: 'no cake talk' })
    t.ok(
      tp.logs.some((l) =>
        /Request denied by policy no-cake \(source=code:no-cake, version=1\): no cake talk/.test(String(l.msg))
      )
    )
  })

  t.test('a transform replaces the request the model sees', async (t) => {
    gov.setSource('t', [
      policy('rewrite', (c) =>
        isTurn(c) && c.phase === 'PRE_ADMISSION'
          ? { decision: 'transform', request: { ...c.request, message: 'rewritten words' }, reason: 'rewrote' }
          : { decision: 'admit' }
      )
    ])
    t.teardown(() => gov.removeSource('t'))
    const end = terminal(t, await turn({ message: 'original words' }))
    t.match(end, { type: 'complete', text: /You said: "rewritten words"/ })
    t.match(logged('rewrite')[0], { decision: 'transform' })
  })

  t.test('a prefer is recorded and reported', async (t) => {
    gov.setSource('t', [
      policy('likes-short', (c) =>
        isTurn(c) && c.phase === 'PRE_ADMISSION'
          ? { decision: 'prefer', preferred: 'short answers', reason: 'house style' }
          : { decision: 'admit' }
      )
    ])
    t.teardown(() => gov.removeSource('t'))
    const end = terminal(t, await turn({ message: 'hello there' }))
    t.match(end, { type: 'complete', preferences: [{ policy: 'likes-short', preferred: 'short answers' }] })
    t.match(logged('likes-short')[0], { decision: 'prefer', reason: 'house style' })
  })

  t.test('a throwing policy denies', async (t) => {
    gov.setSource('t', [
      policy('broken', () => {
        throw new Error('boom')
      })
    ])
    t.teardown(() => gov.removeSource('t'))
    t.match(terminal(t, await turn({ message: 'hello' })), { type: 'error', code: 'denied', message: /boom/ })
    t.match(logged('broken')[0], { decision: 'error', reason: 'boom' })
  })

  t.test('post-response policies see the whole answer', async (t) => {
    gov.setSource('t', [
      policy('no-echo', (c) =>
        c.phase === 'POST_RESPONSE' && /You said/.test(c.accumulatedResponse)
          ? { decision: 'deny', reason: 'echo' }
          : { decision: 'admit' }
      )
    ])
    t.teardown(() => gov.removeSource('t'))
    t.match(terminal(t, await turn({ message: 'hello' })), {
      type: 'error',
      code: 'denied',
      message: /response denied.*echo/
    })
    t.match(logged('no-echo').at(-1), { decision: 'deny', context_snapshot: { phase: 'post_response' } })
  })

  t.test('a post-response transform is logged and treated as admit', async (t) => {
    gov.setSource('t', [
      policy('late-rewrite', (c) =>
        c.phase === 'POST_RESPONSE'
          ? { decision: 'transform', request: { ...c.request, message: 'too late' }, reason: 'rewrite' }
          : { decision: 'admit' }
      )
    ])
    t.teardown(() => gov.removeSource('t'))
    t.match(terminal(t, await turn({ message: 'hello' })), { type: 'complete', text: /You said: "hello"/ })
    t.match(logged('late-rewrite').at(-1), { decision: 'admit', reason: 'post-response transform ignored' })
    t.ok(tp.logs.some((l) => /policy late-rewrite returned Transform after the response/.test(String(l.msg))))
  })

  t.test('the kill switch denies every turn', async (t) => {
    const ks = gov.killSwitch()!
    ks.arm('maintenance window', 'ops')
    t.teardown(() => ks.disarm())
    t.match(terminal(t, await turn({ agent: 'demo', message: 'How do sandboxes work?' })), {
      type: 'error',
      code: 'denied',
      message: /maintenance window/
    })
    t.match(logged(ks.name).at(-1), { decision: 'deny', reason: /maintenance window/ })
  })

  t.test('a tool denied by a governance rule: tool-error, and the loop goes on', async (t) => {
    gov.setSource('t', [
      policy('no-secrets', (c) =>
        c.request.metadata.tool_name === 'secret_lookup'
          ? { decision: 'deny', reason: 'secrets stay put' }
          : { decision: 'admit' }
      )
    ])
    t.teardown(() => gov.removeSource('t'))
    const events = await turn({ agent: 'toolbox', message: 'lookup the secret please' })
    t.match(
      events.find((e) => e.type === 'tool-error'),
      { name: 'secret_lookup', message: /denied by policy no-secrets: secrets stay put/ }
    )
    t.notOk(
      events.some((e) => e.type === 'tool-result'),
      'the tool never ran'
    )
    t.match(terminal(t, events), { type: 'complete', text: /secrets stay put/ })
    t.match(
      logged('no-secrets').find((e) => e.decision === 'deny'),
      { context_snapshot: { message: 'call_tool:secret_lookup' } }
    )
  })

  t.test("policies read roles from the credentials only, never from the entry point's facts", async (t) => {
    const seen: unknown[] = []
    gov.setSource('t', [
      policy('roles-seen', (c) => {
        if (c.phase === 'PRE_ADMISSION' && isTurn(c))
          seen.push({ roles: c.request.metadata.roles, channel: c.request.metadata.channel })
        return { decision: 'admit' }
      })
    ])
    t.teardown(() => gov.removeSource('t'))
    const facts = { roles: ['admin'], channel: 'web' }
    terminal(t, await turn({ agent: 'scripted', message: 'hi', facts }))
    terminal(t, await turn({ agent: 'scripted', message: 'hi', facts, roles: ['ops'] }))
    t.same(seen, [
      { roles: undefined, channel: 'web' },
      { roles: ['ops'], channel: 'web' }
    ])
    t.same(facts, { roles: ['admin'], channel: 'web' }, "the caller's facts are left as they were")
  })

  t.test('a tool that times out: tool-error, and the loop goes on', async (t) => {
    const events = await turn({ agent: 'toolbox', message: 'please stall now' })
    t.match(
      events.find((e) => e.type === 'tool-error'),
      { name: 'stall', message: /exceeded its time limit of 300 ms/ }
    )
    t.match(terminal(t, events), { type: 'complete', text: /time limit/ })
  })

  t.test(
    'every turn read is counted once: in flight, streamed texts, TurnCompleted, also when its reader stops',
    async (t) => {
      const done: { outcome: string; outputTokens: number }[] = []
      t.teardown(tp.platform.bus.on('TurnCompleted', (e) => done.push(e)))
      const texts = async (): Promise<number> =>
        (await tp.platform.metrics.registry.getSingleMetric('platform_ai_streaming_texts_total')!.get()).values[0]!
          .value
      const before = await texts()
      const it = ai.runTurn({ message: 'one two three' })[Symbol.asyncIterator]()
      t.equal(ai.inFlight(), 0, 'a turn not yet read is not in flight')
      const events: TurnEvent[] = []
      for (let r = await it.next(); r.done !== true; r = await it.next()) {
        events.push(r.value)
        t.equal(ai.inFlight(), 1, 'in flight while read')
      }
      t.equal(ai.inFlight(), 0)
      t.same((await it.next()).done, true, 'a finished turn stays finished')
      const said = events.filter((e) => e.type === 'text')
      t.equal((await texts()) - before, said.length, 'one streamed text counted per delta')
      const usage = events.find((e) => e.type === 'usage') as Extract<TurnEvent, { type: 'usage' }>
      t.match(done, [{ outcome: 'completed', outputTokens: usage.usage.output }], 'one TurnCompleted with its usage')
      t.same(
        Object.keys(done[0]!),
        ['type', 'agentName', 'duration', 'outcome', 'inputTokens', 'outputTokens', 'timestamp'],
        'its fields in the order every bus event has them'
      )
      t.match(said.map((e) => (e as { delta: string }).delta).join(''), /^You said: "one two three"\./)
      t.equal(events.at(-1)!.type, 'complete')

      // a reader that stops after the first delta ends the turn, counted once as cancelled
      const stopped = ai.runTurn({ message: 'four five six seven' })[Symbol.asyncIterator]()
      t.match((await stopped.next()).value, { type: 'text' })
      t.same(await stopped.return!(undefined), { done: true, value: undefined })
      t.same(await stopped.return!(undefined), { done: true, value: undefined }, 'returning twice ends it once')
      t.equal(ai.inFlight(), 0)
      t.match(done.slice(1), [{ outcome: 'cancelled' }])
      t.equal(done.length, 2)

      // one never read is never counted
      await ai.runTurn({ message: 'unread' })[Symbol.asyncIterator]().return!(undefined)
      t.equal(done.length, 2)
      t.equal(ai.inFlight(), 0)
    }
  )

  t.test('cancellation mid-stream ends the turn with cancelled', async (t) => {
    const ac = new AbortController()
    const events = await collect(
      ai.runTurn({ message: 'one two three four five six seven eight nine ten' }, ac.signal),
      (e) => {
        if (e.type === 'text') ac.abort()
      }
    )
    t.equal(events.filter((e) => e.type === 'text').length, 1, 'no text after the abort')
    t.match(terminal(t, events), { type: 'error', code: 'cancelled' })
  })

  t.test('a turn that ends in an error still closes its post-response phase (slots are released)', async (t) => {
    gov.setSource('t', [new ConcurrencyLimitPolicy('one-at-a-time', 'code:one-at-a-time', '1', 1)])
    t.teardown(() => gov.removeSource('t'))
    const ac = new AbortController()
    const cancelled = await collect(ai.runTurn({ message: 'one two three four', userId: 'u1' }, ac.signal), (e) => {
      if (e.type === 'text') ac.abort()
    })
    t.match(terminal(t, cancelled), { type: 'error', code: 'cancelled' })
    t.match(terminal(t, await turn({ message: 'again', userId: 'u1' })), { type: 'complete' }, 'the slot was released')
  })

  t.test("an agent's own run() answers in its sandbox, still governed", async (t) => {
    const events = await turn({ agent: 'scripted', message: 'hi', history: [{ role: 'user', content: 'before' }] })
    t.match(terminal(t, events), { type: 'complete', text: 'scripted: hi / Be scripted. / 1' })
    t.match(terminal(t, await turn({ agent: 'scripted', message: 'bad' })), {
      type: 'error',
      code: 'runtime',
      message: "agent 'scripted' run() must return a string or { text }"
    })
    gov.setSource('t', [
      policy('no-scripts', (c) =>
        c.phase === 'POST_RESPONSE' && c.accumulatedResponse.startsWith('scripted')
          ? { decision: 'deny', reason: 'no scripts' }
          : { decision: 'admit' }
      )
    ])
    t.teardown(() => gov.removeSource('t'))
    t.match(terminal(t, await turn({ agent: 'scripted', message: 'hi' })), {
      type: 'error',
      code: 'denied',
      policy: 'no-scripts'
    })
  })

  // regression: run() could only return its whole answer at once; ctx.progress({ text }) was dropped
  t.test("an agent's own run() streams text with ctx.progress while it works", async (t) => {
    const texts = (events: TurnEvent[]) => events.flatMap((e) => (e.type === 'text' ? [e.delta] : []))
    const done = await turn({ agent: 'streamer', message: 'go' })
    t.same(texts(done), ['one ', 'two ', 'three'])
    t.match(terminal(t, done), { type: 'complete', text: 'one two three' })
    const streamedOnly = await turn({ agent: 'streamer', message: 'all streamed' })
    t.same(texts(streamedOnly), ['one ', 'two '])
    t.match(terminal(t, streamedOnly), { type: 'complete', text: 'one two ' })
    // the run ends only when cancelled: text that reached the caller was streamed, not returned
    const ac = new AbortController()
    const waiting = await collect(ai.runTurn({ agent: 'streamer', message: 'wait' }, ac.signal), (e) => {
      if (e.type === 'text' && e.delta === 'two ') ac.abort()
    })
    t.same(texts(waiting), ['one ', 'two '])
    t.match(terminal(t, waiting), { type: 'error', code: 'cancelled' })
  })

  t.test('bad input: unknown agent, missing message', async (t) => {
    t.match(terminal(t, await turn({ agent: 'nobody', message: 'hi' })), {
      type: 'error',
      code: 'unknown-agent',
      message: /nobody/
    })
    t.match(terminal(t, await turn({} as TurnRequest)), { type: 'error', code: 'bad-request' })
    t.match(terminal(t, await turn({ message: 'hi', history: 'x' } as never)), {
      type: 'error',
      code: 'bad-request',
      message: /history/
    })
    // every field of the wrong shape is named, the first one in the request's order
    const shapes: [Record<string, unknown>, string][] = [
      [{ clientTools: {} }, "'clientTools' must be an array"],
      [{ continuation: 1 }, "'continuation' must be an array"],
      [{ roles: 'admin' }, "'roles' must be an array"],
      [{ images: null }, "'images' must be an array"],
      [{ facts: [] }, "'facts' must be an object"],
      [{ clientMetadata: null }, "'clientMetadata' must be an object"],
      [{ facts: 'x', history: 'x' }, "'history' must be an array"],
      [{ message: 1 }, "a turn needs 'message' (a string)"]
    ]
    for (const [fields, message] of shapes)
      t.match(terminal(t, await turn({ message: 'hi', ...fields } as never)), { code: 'bad-request', message })
    // a runtime without structured-output, or an agent's own run, never answers as if it kept to a format
    const responseFormat = { type: 'json_object' } as const
    t.match(terminal(t, await turn({ agent: 'demo', message: 'hi', responseFormat })), {
      type: 'error',
      code: 'bad-request',
      message: /runtime 'demo' cannot answer in a response format/
    })
    t.match(terminal(t, await turn({ agent: 'scripted', message: 'hi', responseFormat })), {
      type: 'error',
      code: 'bad-request',
      message: /no response format/
    })
  })
})

t.test('turns over the openai runtime', async (t) => {
  const server = await new OpenAiServer().start()
  t.teardown(() => server.close())
  const tp = await startTestPlatform(
    {
      'platform.plugins.dirs': [join(REPO, 'plugins'), pluginsRoot],
      'platform.ai.runtime': 'openai',
      'platform.ai.openai.base-url': server.url,
      'platform.ai.openai.model': 'test-model',
      'platform.ai.max-tool-rounds': 2
    },
    { install: installAreas }
  )
  t.teardown(tp.close)
  const ai = tp.platform.area(AI)

  t.test('the scope preamble reaches the model before the agent prompt', async (t) => {
    server.reset()
    server.chat = () => ({
      stream: sseEvents([deltaChunk({ content: 'Plugins are folders.' }, 'stop'), usageChunk(5, 3)])
    })
    const end = terminal(t, await collect(ai.runTurn({ agent: 'demo', message: 'How do plugins work?' })))
    t.match(end, { type: 'complete', text: 'Plugins are folders.' })
    const sys = server.on('/chat/completions')[0].messages[0]
    t.equal(sys.role, 'system')
    t.ok(String(sys.content).startsWith(PREAMBLE_HEADING), 'the preamble leads the system prompt')
    t.match(sys.content, /You are the platform guide/, 'the agent prompt follows')
    // a caller's own system prompt is confined too
    server.reset()
    await collect(ai.runTurn({ agent: 'demo', message: 'How do plugins work?', systemPrompt: 'Be terse.' }))
    t.ok(String(server.on('/chat/completions')[0].messages[0].content).startsWith(PREAMBLE_HEADING))
  })

  t.test('a model naming a runtime picks that runtime; another name goes to the active one', async (t) => {
    server.reset()
    t.match(terminal(t, await collect(ai.runTurn({ message: 'hello', model: 'demo' }))), {
      type: 'complete',
      text: /You said: "hello"/
    })
    t.equal(server.on('/chat/completions').length, 0, 'the openai server was not asked')
    server.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'ok' }, 'stop')]) })
    t.match(terminal(t, await collect(ai.runTurn({ message: 'hello', model: 'big-model' }))), { text: 'ok' })
    t.equal(server.on('/chat/completions')[0].model, 'big-model')
  })

  t.test("an agent's model is its turns' default; the caller's model wins", async (t) => {
    server.reset()
    server.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'ok' }, 'stop')]) })
    t.match(terminal(t, await collect(ai.runTurn({ agent: 'on-demo', message: 'hello' }))), {
      type: 'complete',
      text: /You said: "hello"/
    })
    t.equal(server.on('/chat/completions').length, 0, 'a runtime name: that runtime answers')
    t.match(terminal(t, await collect(ai.runTurn({ agent: 'on-big', message: 'hello' }))), { text: 'ok' })
    t.equal(server.on('/chat/completions')[0].model, 'big-model', 'a model name: the active runtime, that model')
    server.reset()
    await collect(ai.runTurn({ agent: 'on-big', message: 'hello', model: 'other-model' }))
    t.equal(server.on('/chat/completions')[0].model, 'other-model')
  })

  t.test('max-tool-rounds ends a model that never stops calling tools', async (t) => {
    server.reset()
    let n = 0
    server.chat = () => ({
      stream: sseEvents([
        deltaChunk({
          tool_calls: [{ index: 0, id: `call_${n++}`, type: 'function', function: { name: 'topics', arguments: '{}' } }]
        }),
        deltaChunk({}, 'tool_calls')
      ])
    })
    const events = await collect(ai.runTurn({ agent: 'demo', message: 'How do plugins work?' }))
    t.equal(events.filter((e) => e.type === 'tool-result').length, 2, 'two rounds of tools ran')
    t.match(terminal(t, events), { type: 'error', code: 'max-tool-rounds', message: /platform\.ai\.max-tool-rounds/ })
    t.equal(server.on('/chat/completions').length, 3)
    // the results went back to the model as tool messages
    t.match(server.on('/chat/completions')[1].messages, [{}, {}, { role: 'assistant' }, { role: 'tool' }])
  })

  t.test("each tool round's own text goes back as its assistant message, with a text sink or without", async (t) => {
    for (const sink of [false, true]) {
      server.reset()
      let n = 0
      server.chat = () => {
        const round = n++
        return {
          stream: sseEvents(
            round < 2
              ? [
                  deltaChunk({ content: `round ${round} ` }),
                  deltaChunk({ content: 'looks up' }),
                  deltaChunk({
                    tool_calls: [
                      { index: 0, id: `call_${round}`, type: 'function', function: { name: 'topics', arguments: '{}' } }
                    ]
                  }),
                  deltaChunk({}, 'tool_calls')
                ]
              : [deltaChunk({ content: 'done' }, 'stop')]
          )
        }
      }
      const deltas: string[] = []
      const events = await collect(
        ai.runTurn(
          { agent: 'demo', message: 'How do plugins work?' },
          undefined,
          sink ? (d) => void deltas.push(d) : undefined
        )
      )
      t.match(terminal(t, events), { type: 'complete', text: 'round 0 looks upround 1 looks updone' })
      const said = (i: number): string[] =>
        (server.on('/chat/completions')[i].messages as { role: string; content: string }[])
          .filter((m) => m.role === 'assistant')
          .map((m) => m.content)
      t.same(said(1), ['round 0 looks up'], `sink ${sink}: the first round's text`)
      t.same(said(2), ['round 0 looks up', 'round 1 looks up'], `sink ${sink}: each round its own`)
      if (sink) t.equal(deltas.join(''), 'round 0 looks upround 1 looks updone')
    }
  })
})
