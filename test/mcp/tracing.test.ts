import t from 'tap'
import { randomBytes } from 'node:crypto'
import {
  trace,
  propagation,
  context,
  ROOT_CONTEXT,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
  type Attributes,
  type SpanStatus
} from '@opentelemetry/api'
import { startExtras } from './extras-helpers.js'
import { modern, openSession } from './helpers.js'
import { parentContext } from '../../runtime/mcp/tracing.js'

/** A span recorder implementing the @opentelemetry/api interfaces (no SDK package). */
interface Recorded {
  name: string
  attributes: Attributes
  parent?: SpanContext
  baggage?: Record<string, string>
  status?: SpanStatus
  ended: boolean
  exceptions: unknown[]
}
const spans: Recorded[] = []

class RecSpan implements Span {
  private readonly sc: SpanContext
  constructor(
    readonly rec: Recorded,
    parent: SpanContext | undefined
  ) {
    this.sc = {
      traceId: parent?.traceId ?? randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
      traceFlags: 1
    }
  }

  spanContext(): SpanContext {
    return this.sc
  }
  setAttribute(k: string, v: any): this {
    this.rec.attributes[k] = v
    return this
  }
  setAttributes(a: Attributes): this {
    Object.assign(this.rec.attributes, a)
    return this
  }
  addEvent(): this {
    return this
  }
  addLink(): this {
    return this
  }
  addLinks(): this {
    return this
  }
  setStatus(s: SpanStatus): this {
    this.rec.status = s
    return this
  }
  updateName(n: string): this {
    this.rec.name = n
    return this
  }
  end(): void {
    this.rec.ended = true
  }
  isRecording(): boolean {
    return true
  }
  recordException(e: unknown): void {
    this.rec.exceptions.push(e)
  }
}

class RecTracer implements Tracer {
  startSpan(name: string, options: SpanOptions = {}, ctx: Context = context.active()): Span {
    const parent = trace.getSpanContext(ctx)
    const bag = propagation.getBaggage(ctx)
    const rec: Recorded = { name, attributes: { ...options.attributes }, ended: false, exceptions: [] }
    if (parent !== undefined) rec.parent = parent
    if (bag !== undefined) rec.baggage = Object.fromEntries(bag.getAllEntries().map(([k, v]) => [k, v.value]))
    spans.push(rec)
    return new RecSpan(rec, parent)
  }

  startActiveSpan(name: string, ...rest: any[]): any {
    const fn = rest[rest.length - 1] as (s: Span) => unknown
    return fn(this.startSpan(name, typeof rest[0] === 'object' ? rest[0] : {}))
  }
}

const provider: TracerProvider = { getTracer: () => new RecTracer() }
trace.setGlobalTracerProvider(provider)

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT_ID = '00f067aa0ba902b7'
const TP = `00-${TRACE_ID}-${PARENT_ID}-01`

t.test('spans around tools/call, resources/read and prompts/get, parented by _meta trace context', async (t) => {
  const m = await startExtras()
  t.teardown(m.tp.close)
  m.mcp.registerTool({
    name: 'pair',
    description: 'two args',
    params: [{ name: 'a' }, { name: 'b' }],
    handler: () => 'ok'
  })
  m.mcp.registerTool({
    name: 'explode',
    description: 'throws',
    handler: () => {
      throw new Error('boom')
    }
  })
  m.mcp.registerTool({
    name: 'soft_fail',
    description: 'isError result',
    handler: () => ({ content: [{ type: 'text', text: 'nope' }], isError: true })
  })
  m.mcp.registerResource('mem://traced', 'traced', 'A resource', 'text/plain', () => 'hello')
  m.mcp.registerPrompt('traced_prompt', 'A prompt', [{ name: 'who' }], (a) => `hi ${String(a.who)}`)

  await t.test('stateless tools/call with traceparent, tracestate and baggage in _meta', async (t) => {
    spans.length = 0
    const r = await modern(
      m.url,
      'tools/call',
      { name: 'pair', arguments: { a: 'x', b: 'y' } },
      { metaExtra: { traceparent: TP, tracestate: 'vendor=abc', baggage: 'user=ada,tenant=t%201;prop=1' } }
    )
    t.equal(r.status, 200)
    t.equal(spans.length, 1)
    const s = spans[0]!
    t.equal(s.name, 'tools/call pair')
    t.same(s.attributes, {
      'mcp.tool.name': 'pair',
      'mcp.tool.type': 'tool',
      'mcp.tool.arg_count': 2,
      'mcp.tool.error': false
    })
    t.equal(s.parent?.traceId, TRACE_ID)
    t.equal(s.parent?.spanId, PARENT_ID)
    t.equal(s.parent?.isRemote, true)
    t.equal(s.parent?.traceState?.get('vendor'), 'abc')
    t.same(s.baggage, { user: 'ada', tenant: 't 1' })
    t.ok(s.ended)
  })

  await t.test('a throwing tool and an isError result set mcp.tool.error', async (t) => {
    spans.length = 0
    await modern(m.url, 'tools/call', { name: 'explode', arguments: {} })
    await modern(m.url, 'tools/call', { name: 'soft_fail', arguments: {} })
    t.same(
      spans.map((s) => [s.name, s.attributes['mcp.tool.error'], s.status?.code]),
      [
        ['tools/call explode', true, 2],
        ['tools/call soft_fail', true, 2]
      ]
    )
    t.equal(spans[0]!.exceptions.length, 1)
    t.equal(spans[0]!.parent, undefined, 'no traceparent: a root span')
  })

  await t.test('resources/read and prompts/get in the session dialect, traceparent in params._meta', async (t) => {
    spans.length = 0
    const s = await openSession(m.url)
    await s.call('resources/read', { uri: 'mem://traced', _meta: { traceparent: TP } })
    await s.call('prompts/get', { name: 'traced_prompt', arguments: { who: 'x' } })
    t.same(
      spans.map((x) => [
        x.name,
        x.attributes['mcp.tool.type'],
        x.attributes['mcp.tool.arg_count'],
        x.attributes['mcp.tool.error']
      ]),
      [
        ['resources/read mem://traced', 'resource', 1, false],
        ['prompts/get traced_prompt', 'prompt', 1, false]
      ]
    )
    t.equal(spans[0]!.parent?.traceId, TRACE_ID)
    t.equal(spans[1]!.parent, undefined)
  })
})

t.test('traceparent parsing follows W3C Trace Context', async (t) => {
  const parent = (tp: string) => trace.getSpanContext(parentContext({ traceparent: tp }))
  t.equal(parent(TP)?.traceFlags, 1)
  t.equal(parent(`00-${TRACE_ID}-${PARENT_ID}-00`)?.traceFlags, 0)
  t.equal(parent(`01-${TRACE_ID}-${PARENT_ID}-01-future`)?.traceId, TRACE_ID, 'a later version may add fields')
  for (const bad of [
    `ff-${TRACE_ID}-${PARENT_ID}-01`,
    `00-${'0'.repeat(32)}-${PARENT_ID}-01`,
    `00-${TRACE_ID}-${'0'.repeat(16)}-01`,
    `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`,
    `00-${TRACE_ID}-${PARENT_ID}-01-extra`,
    'garbage',
    ''
  ]) {
    t.equal(parent(bad), undefined, bad)
  }
  t.equal(parentContext(undefined), ROOT_CONTEXT)
})

t.test('tracing off: no spans', async (t) => {
  const m = await startExtras({ 'platform.mcp.tracing.enabled': false })
  t.teardown(m.tp.close)
  spans.length = 0
  t.equal((await modern(m.url, 'tools/call', { name: 'test_simple_text', arguments: {} })).status, 200)
  t.equal(spans.length, 0)
})
