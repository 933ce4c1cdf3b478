import t from 'tap'
import { rmSync } from 'node:fs'
import { StepCapture } from '../../runtime/interactions/capture.js'
import { type InteractionStep } from '../../runtime/interactions/index.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { inlineGrants, tempRoot, writePlugin } from '../plugins/helpers.js'
import { ALICE, startInteractions } from './helpers.js'

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

// an agent with one tool for the openai path; runtimes of a plugin for the plugin path
const root = tempRoot('interactions-plugins-')
t.teardown(() => rmSync(root, { recursive: true, force: true }))
writePlugin(root, 'helper', {
  index: `import { definePlugin, agent, tool } from 'uws-agent-platform/sdk'
export default definePlugin({ agents: [agent({
  name: 'helper',
  systemPrompt: 'Use lookup.',
  tools: [
    tool({ name: 'lookup', description: 'Looks things up', run: ({ q }) => 'found ' + q }),
    tool({ name: 'broken', description: 'Always fails', run: () => { throw new Error('out of order') } })
  ]
})] })
`
})
writePlugin(root, 'runtimes', {
  index: `import { definePlugin, runtime } from 'uws-agent-platform/sdk'
export default definePlugin({ runtimes: [
  runtime({
    name: 'echo', capabilities: ['streaming', 'cancellation', 'usage'], models: ['echo-1'],
    async * stream (req) {
      for (const w of String(req.message).split(' ')) yield { type: 'text', delta: w + ' ' }
      yield { type: 'usage', usage: { input: 2, output: 3, model: 'echo-1' } }
      yield { type: 'done', finishReason: 'stop' }
    }
  }),
  runtime({
    name: 'stubborn', capabilities: ['streaming'], models: ['stubborn-1'],
    async * stream (req) {
      await new Promise((r) => setTimeout(r, 400))
      yield { type: 'text', delta: 'finished anyway' }
      yield { type: 'done', finishReason: 'stop' }
    }
  })
] })
`
})

t.test('capture through the openai runtime: text deltas, a tool call and its result, usage', async (t) => {
  const model = await new OpenAiServer().start()
  t.teardown(() => model.close())
  const tp = await startInteractions({
    'platform.plugins.dirs': [root],
    ...inlineGrants('runtimes'),
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model',
    // long enough that only structured steps and the end flush text: the grouping is deterministic
    'platform.interactions.text-coalesce-ms': 60_000
  })
  t.teardown(tp.close)
  let round = 0
  model.chat = () =>
    ++round === 1
      ? {
          stream: sseEvents([
            deltaChunk({ content: 'Let me ' }),
            deltaChunk({ content: 'check.' }),
            deltaChunk({
              tool_calls: [
                { index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":' } }
              ]
            }),
            deltaChunk({ tool_calls: [{ index: 0, function: { arguments: '"tides"}' } }] }, 'tool_calls'),
            usageChunk(12, 7)
          ])
        }
      : {
          // a double completion: two finish chunks and two [DONE]s
          stream: [
            ...sseEvents([deltaChunk({ content: 'It is ' }), deltaChunk({ content: 'found tides.' }, 'stop')]),
            ...sseEvents([deltaChunk({}, 'stop'), usageChunk(30, 4)])
          ]
        }
  const r = await tp.api.create({ message: 'tides?', agentId: 'helper' })
  t.equal(r.status, 200)
  // the final text is the turn's whole answer, every round's text, as post-response policies saw it
  t.match(r.body, { status: 'COMPLETED', agentId: 'helper', model: 'test-model' })
  t.equal(r.body.finalText, 'Let me check.It is found tides.')
  const steps = r.body.steps.map((s: InteractionStep) => ({
    seq: s.seq,
    type: s.type,
    text: s.text,
    toolName: s.toolName,
    data: s.data,
    usage: s.usage
  }))
  t.same(steps, [
    { seq: 0, type: 'text', text: 'Let me check.', toolName: null, data: {}, usage: null },
    {
      seq: 1,
      type: 'usage',
      text: null,
      toolName: null,
      data: {},
      usage: { input: 12, output: 7, cachedInput: 0, total: 19, model: 'test-model' }
    },
    {
      seq: 2,
      type: 'tool-call',
      text: null,
      toolName: 'lookup',
      data: { id: 'call_1', arguments: { q: 'tides' } },
      usage: null
    },
    {
      seq: 3,
      type: 'tool-result',
      text: null,
      toolName: 'lookup',
      data: { id: 'call_1', result: 'found tides' },
      usage: null
    },
    { seq: 4, type: 'text', text: 'It is found tides.', toolName: null, data: {}, usage: null },
    { seq: 5, type: 'completion', text: 'Let me check.It is found tides.', toolName: null, data: {}, usage: null }
  ])
  t.same(
    r.body.usage,
    { input: 12, output: 7, cachedInput: 0, total: 19, model: 'test-model' },
    'the second round stopped at its first [DONE]: no usage, no second completion'
  )
  t.same((await tp.api.get(r.body.id)).body.steps, r.body.steps, 'persisted as captured')

  t.test('a failing tool is a tool-error step, and the turn goes on', async (t) => {
    let n = 0
    model.chat = () =>
      ++n === 1
        ? {
            stream: sseEvents([
              deltaChunk(
                {
                  tool_calls: [{ index: 0, id: 'c2', type: 'function', function: { name: 'broken', arguments: '{}' } }]
                },
                'tool_calls'
              )
            ])
          }
        : { stream: sseEvents([deltaChunk({ content: 'Sorry.' }, 'stop')]) }
    const r = await tp.api.create({ message: 'try it', agentId: 'helper' })
    t.same(
      r.body.steps.map((s: InteractionStep) => [s.type, s.toolName, s.text]),
      [
        ['tool-call', 'broken', null],
        ['tool-error', 'broken', "tool 'broken' failed: plugin 'helper' threw: out of order"],
        ['text', null, 'Sorry.'],
        ['completion', null, 'Sorry.']
      ],
      'zero-count usage (the fake reports none) records no usage step'
    )
    t.equal(r.body.usage, null)
  })

  t.test('through a runtime a plugin contributes', async (t) => {
    const r = await tp.api.create({ message: 'hello from plugin', model: 'echo' })
    t.match(r.body, { status: 'COMPLETED', model: 'echo', finalText: 'hello from plugin ' })
    t.same(
      r.body.steps.map((s: InteractionStep) => [s.type, s.text]),
      [
        ['text', 'hello from plugin '],
        ['usage', null],
        ['completion', 'hello from plugin ']
      ]
    )
    t.match(r.body.steps[1].usage, { input: 2, output: 3, total: 5, model: 'echo-1' })
  })

  t.test('a runtime without cancellation runs to completion after a cancel', async (t) => {
    const r = await tp.api.create({ message: 'x', model: 'stubborn', background: true })
    const c = await tp.api.call('POST', `/api/interactions/${r.body.id}/cancel`, { token: ALICE })
    t.same([c.status, c.body], [200, { status: 'cancel requested' }])
    const done = await tp.api.settled(r.body.id)
    t.match(done, { status: 'COMPLETED', finalText: 'finished anyway' })
  })
})

t.test('StepCapture: one terminal step whoever ends first; the step cap; the coalescing window', async (t) => {
  const steps: InteractionStep[] = []
  const c = new StepCapture({ maxSteps: 3, coalesceMs: 60_000, emit: (s) => steps.push(s) })
  for (let i = 0; i < 5; i++) {
    c.event({ type: 'text', delta: `t${i}` })
    c.event({ type: 'tool-start', call: { id: `c${i}`, name: 'x', arguments: {} } })
  }
  c.event({ type: 'usage', usage: { input: 0, output: 0, cachedInput: 0, total: 0, model: 'm' } })
  c.event({ type: 'usage', usage: { input: 1, output: 0, cachedInput: 0, total: 1, model: 'm' } })
  t.match(c.event({ type: 'complete', text: 'done', preferences: [], userMessage: 'hi' }), {
    status: 'COMPLETED',
    finalText: 'done'
  })
  t.equal(c.complete('again'), undefined, 'a second completion records nothing')
  t.equal(c.fail('late', 'runtime'), undefined, 'nor does a late failure')
  t.equal(c.event({ type: 'text', delta: 'after' }), undefined)
  t.same(
    steps.map((s) => s.type),
    ['text', 'tool-call', 'text', 'usage', 'completion'],
    'three non-terminal steps kept, then only usage (with counts) and the one terminal step'
  )
  t.same(steps[4]!.data, { droppedSteps: 7 })
  t.same(
    steps.map((s) => s.seq),
    [0, 1, 2, 3, 4],
    'seqs have no gaps'
  )

  const timed: InteractionStep[] = []
  const w = new StepCapture({ maxSteps: 100, coalesceMs: 30, emit: (s) => timed.push(s) })
  w.event({ type: 'text', delta: 'a' })
  w.event({ type: 'text', delta: 'b' })
  t.equal(timed.length, 0, 'held while the window is open')
  await wait(80)
  t.same(
    timed.map((s) => s.text),
    ['ab'],
    'flushed when the window closes'
  )
  w.event({ type: 'text', delta: 'c' })
  t.match(w.fail('stopped', 'cancelled', 'CANCELLED'), { status: 'CANCELLED', errorMessage: 'stopped' })
  t.same(
    timed.map((s) => [s.type, s.text]),
    [
      ['text', 'ab'],
      ['text', 'c'],
      ['error', 'stopped']
    ],
    'pending text lands before the terminal step'
  )
  await wait(50)
  t.equal(timed.length, 3, 'no timer fires after the end')
})

// With coalescing off, a delta becomes its step at once (no array held and joined per delta): the
// steps keep the deltas' order and text, the cap and the drop count still apply, the empty delta
// makes no step, and the terminal step comes after the last delta.
t.test('StepCapture without coalescing: one step per delta, in order, capped, then one terminal step', async (t) => {
  const steps: InteractionStep[] = []
  const c = new StepCapture({ maxSteps: 4, coalesceMs: 0, emit: (s) => steps.push(s) })
  for (const d of ['a ', '', 'b ', 'c ', 'd ', 'e ']) c.event({ type: 'text', delta: d })
  c.event({ type: 'complete', text: 'a b c d e', preferences: [], userMessage: 'hi' })
  c.event({ type: 'text', delta: 'late' })
  t.same(
    steps.map((s) => [s.seq, s.type, s.text]),
    [
      [0, 'text', 'a '],
      [1, 'text', 'b '],
      [2, 'text', 'c '],
      [3, 'text', 'd '],
      [4, 'completion', 'a b c d e']
    ]
  )
  t.same(steps[4]!.data, { droppedSteps: 1 }, 'the delta beyond the cap is counted, not kept')
  t.same(steps[0]!.data, {})
})

// the turn's usage is stored as the runtimes build theirs: the same fields, in the same order
t.test("StepCapture: usage summed over rounds, with the runtime's fields in its order", async (t) => {
  const steps: InteractionStep[] = []
  const c = new StepCapture({ maxSteps: 10, coalesceMs: 0, emit: (s) => steps.push(s) })
  const round = { input: 2, output: 3, cachedInput: 1, total: 5, model: 'echo-1' }
  c.event({ type: 'usage', usage: round })
  t.same(c.usage, round, 'one round: its counts')
  t.not(c.usage, round, "a copy: the next round does not change the step's usage")
  c.event({ type: 'usage', usage: { input: 4, output: 1, cachedInput: 0, total: 5, model: 'echo-2' } })
  t.same(c.usage, { input: 6, output: 4, cachedInput: 1, total: 10, model: 'echo-2' }, 'summed; the last model')
  t.same(Object.keys(c.usage!), Object.keys(round), 'the fields in the order the runtimes write them')
  t.same(steps[0]!.usage, round, 'the step keeps its own round')
})
