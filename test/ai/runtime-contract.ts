import type { Test } from 'tap'
import type { AiEvent, AiRuntime, AiRuntimeRequest } from '../../runtime/ai/index.js'
import { Cancellation } from '../../runtime/plugins/index.js'

/** What a runtime under the contract is asked; `long` must stream long enough to be cancelled mid-way. */
export interface ContractSubject {
  runtime: AiRuntime
  text: AiRuntimeRequest
  tool: AiRuntimeRequest
  long: AiRuntimeRequest
  /** Tool names `tool` may legitimately call. */
  toolNames: string[]
}

export async function collect(it: AsyncIterable<AiEvent>, onEvent?: (e: AiEvent) => void): Promise<AiEvent[]> {
  const out: AiEvent[] = []
  for await (const e of it) {
    out.push(e)
    onEvent?.(e)
  }
  return out
}

function terminalShape(t: Test, events: AiEvent[]): void {
  const terminals = events.filter((e) => e.type === 'done' || e.type === 'error')
  t.equal(terminals.length, 1, 'exactly one terminal event')
  t.equal(events.indexOf(terminals[0]!), events.length - 1, 'the terminal event is the last one')
}

function usageShape(t: Test, events: AiEvent[]): void {
  const usages = events.filter((e) => e.type === 'usage')
  t.equal(usages.length, 1, 'one usage event')
  const u = (usages[0] as Extract<AiEvent, { type: 'usage' }>).usage
  for (const k of ['input', 'output', 'cachedInput', 'total'] as const)
    t.ok(Number.isInteger(u[k]) && u[k] >= 0, `${k} is a count`)
  t.equal(u.total, u.input + u.output, 'total is input + output')
  t.type(u.model, 'string')
  t.ok(u.model !== '', 'usage names the model')
}

/**
 * The runtime contract, run against every runtime (demo, openai against a fake server, a plugin
 * runtime) so they stay interchangeable for the pipeline built on them.
 */
export function runRuntimeContract(t: Test, name: string, setup: (t: Test) => Promise<ContractSubject>): void {
  t.test(`${name}: runtime contract`, async (t) => {
    const s = await setup(t)

    t.test('describes itself', async (t) => {
      t.equal(s.runtime.name, name)
      t.type(s.runtime.priority, 'number')
      t.ok(s.runtime.isAvailable(), 'available')
      t.ok(s.runtime.capabilities.includes('streaming'), 'streams')
      t.ok(s.runtime.models.length > 0, 'names at least one model')
    })

    t.test('a text answer: deltas, usage, one terminal done', async (t) => {
      const events = await collect(s.runtime.stream(s.text))
      terminalShape(t, events)
      t.match(events[events.length - 1], { type: 'done', finishReason: 'stop' })
      const text = events
        .filter((e) => e.type === 'text')
        .map((e) => (e as { delta: string }).delta)
        .join('')
      t.ok(text.length > 0, `answered: ${text.slice(0, 60)}`)
      usageShape(t, events)
    })

    t.test('a text answer through a text sink: the same text, in order, before the terminal event', async (t) => {
      const plain = await collect(s.runtime.stream(s.text))
      const said = (events: AiEvent[]): string =>
        events
          .filter((e) => e.type === 'text')
          .map((e) => (e as { delta: string }).delta)
          .join('')
      // what reached the reader, in arrival order: the sink's deltas and the events between them
      const arrived: AiEvent[] = []
      let held = 0
      const sink = (delta: string): Promise<void> | undefined => {
        arrived.push({ type: 'text', delta })
        // every other delta held a moment: the runtime waits for the sink's promise
        if (held++ % 2 === 1) return undefined
        return new Promise((resolve) => setTimeout(resolve, 1))
      }
      const events = await collect(s.runtime.stream(s.text, undefined, sink), (e) => arrived.push(e))
      terminalShape(t, events)
      terminalShape(t, arrived)
      t.equal(said(arrived), said(plain), 'the same text as without a sink')
      t.same(
        events.filter((e) => e.type !== 'text'),
        plain.filter((e) => e.type !== 'text'),
        'the same events besides the text'
      )
      const failing = await collect(
        s.runtime.stream(s.text, undefined, () => {
          throw new Error('sink refused')
        })
      ).then(
        () => 'ended',
        (err: Error) => err.message
      )
      t.ok(
        failing === 'sink refused' || held === 0,
        `what the sink throws reaches the reader (${failing})` // a runtime that ignores the sink never calls it
      )
    })

    t.test(
      'a tool call: id, known name, object arguments, finish tool-calls',
      { skip: !s.runtime.capabilities.includes('tool-calling') && 'no tool-calling' },
      async (t) => {
        const events = await collect(s.runtime.stream(s.tool))
        terminalShape(t, events)
        const calls = events
          .filter((e) => e.type === 'tool-call')
          .map((e) => (e as Extract<AiEvent, { type: 'tool-call' }>).call)
        t.ok(calls.length >= 1, 'asks for a tool')
        for (const c of calls) {
          t.ok(typeof c.id === 'string' && c.id !== '', 'call has an id')
          t.ok(s.toolNames.includes(c.name), `calls a tool it was given (${c.name})`)
          t.ok(
            typeof c.arguments === 'object' && c.arguments !== null && !Array.isArray(c.arguments),
            'arguments are an object'
          )
        }
        t.match(events[events.length - 1], { type: 'done', finishReason: 'tool-calls' })
        usageShape(t, events)
      }
    )

    t.test(
      'cancellation mid-stream ends it promptly with one terminal event',
      { skip: !s.runtime.capabilities.includes('cancellation') && 'no cancellation' },
      async (t) => {
        const ctl = new AbortController()
        const started = Date.now()
        const events = await collect(s.runtime.stream(s.long, ctl.signal), (e) => {
          if (e.type === 'text') ctl.abort()
        })
        t.ok(Date.now() - started < 3000, 'ended soon after the abort')
        terminalShape(t, events)
        const last = events[events.length - 1]!
        t.ok(
          (last.type === 'done' && last.finishReason === 'cancelled') ||
            (last.type === 'error' && last.code === 'cancelled'),
          `ended as cancelled: ${JSON.stringify(last)}`
        )
        t.ok(events.filter((e) => e.type === 'text').length <= 2, 'stopped streaming text after the abort')
      }
    )

    t.test(
      "the platform's Cancellation cancels like an AbortSignal",
      { skip: !s.runtime.capabilities.includes('cancellation') && 'no cancellation' },
      async (t) => {
        const c = new Cancellation()
        const events = await collect(s.runtime.stream(s.long, c), (e) => {
          if (e.type === 'text') c.abort()
        })
        terminalShape(t, events)
        const last = events[events.length - 1]!
        t.ok(
          (last.type === 'done' && last.finishReason === 'cancelled') ||
            (last.type === 'error' && last.code === 'cancelled'),
          `ended as cancelled: ${JSON.stringify(last)}`
        )
      }
    )

    t.test(
      'an already aborted signal yields a cancelled terminal and no text',
      { skip: !s.runtime.capabilities.includes('cancellation') && 'no cancellation' },
      async (t) => {
        const events = await collect(s.runtime.stream(s.long, AbortSignal.abort()))
        terminalShape(t, events)
        t.equal(events.filter((e) => e.type === 'text').length, 0, 'no text')
      }
    )
  })
}
