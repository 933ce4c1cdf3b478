import {
  context,
  propagation,
  trace,
  createTraceState,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  ROOT_CONTEXT,
  type Context as OtelContext,
  type Tracer
} from '@opentelemetry/api'
import type { Platform } from '../platform.js'
import { MCP_BEFORE_DISPATCH, MCP_INVOCATION_WRAPPER } from './key.js'
import { isObject, type CallContext, type JsonObject } from './types.js'
import type { InvocationWrapper } from './calls.js'

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const METHOD_OF = { tool: 'tools/call', resource: 'resources/read', prompt: 'prompts/get' } as const

/**
 * W3C trace context from a request's `_meta` (`traceparent`, `tracestate`, `baggage`) as the parent
 * of the span. @opentelemetry/core's propagator is not installed, so the header is parsed here
 * (W3C Trace Context §3.2): version ff, all-zero ids and extra fields on version 00 are invalid.
 */
export function parentContext(meta: JsonObject | undefined, base: OtelContext = ROOT_CONTEXT): OtelContext {
  if (meta === undefined) return base
  let ctx = base
  const tp = meta.traceparent
  if (typeof tp === 'string') {
    const m = TRACEPARENT.exec(tp.trim())
    if (
      m !== null &&
      m[1] !== 'ff' &&
      !(m[1] === '00' && m[5] !== undefined) &&
      !/^0+$/.test(m[2]!) &&
      !/^0+$/.test(m[3]!)
    ) {
      const sc: Parameters<typeof trace.setSpanContext>[1] = {
        traceId: m[2]!,
        spanId: m[3]!,
        traceFlags: Number.parseInt(m[4]!, 16) & 1,
        isRemote: true
      }
      if (typeof meta.tracestate === 'string' && meta.tracestate !== '') {
        try {
          sc.traceState = createTraceState(meta.tracestate)
        } catch {
          /* ignore an invalid tracestate */
        }
      }
      ctx = trace.setSpanContext(ctx, sc)
    }
  }
  if (typeof meta.baggage === 'string' && meta.baggage !== '') {
    const entries: Record<string, { value: string }> = {}
    for (const member of meta.baggage.split(',')) {
      const kv = member.split(';')[0]!
      const eq = kv.indexOf('=')
      if (eq <= 0) continue
      try {
        entries[decodeURIComponent(kv.slice(0, eq).trim())] = { value: decodeURIComponent(kv.slice(eq + 1).trim()) }
      } catch {
        /* skip a bad member */
      }
    }
    if (Object.keys(entries).length > 0) ctx = propagation.setBaggage(ctx, propagation.createBaggage(entries))
  }
  return ctx
}

/**
 * Spans around tools/call, resources/read and prompts/get through @opentelemetry/api: a no-op
 * until an SDK registers a tracer provider. Session-dialect requests carry `_meta` in params only,
 * so a beforeDispatch hook remembers it per request (the stateless envelope is `ctx.meta`). Both
 * go in at the MCP area's extension points.
 */
export function installTracing(platform: Platform): void {
  const tracer: Tracer = trace.getTracer('agent-platform-mcp')
  const metas = new WeakMap<CallContext, JsonObject>()
  platform.extend(MCP_BEFORE_DISPATCH, (msg, ctx) => {
    const m = msg.params?._meta
    if (ctx.meta === undefined && isObject(m) && (m.traceparent !== undefined || m.baggage !== undefined))
      metas.set(ctx, m)
  })
  // no SDK registered: skip span creation on the hot path (a provider registered later is picked up)
  const provider = trace.getTracerProvider()
  const noSdk = (): boolean =>
    provider instanceof ProxyTracerProvider && provider.getDelegate().constructor.name === 'NoopTracerProvider'
  const traced: InvocationWrapper = async (info, run) => {
    const meta = info.ctx.meta ?? metas.get(info.ctx)
    const parent = parentContext(meta, context.active())
    const span = tracer.startSpan(
      `${METHOD_OF[info.type]} ${info.name}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'mcp.tool.name': info.name, 'mcp.tool.type': info.type, 'mcp.tool.arg_count': info.argCount }
      },
      parent
    )
    if (!span.isRecording()) return await run()
    try {
      const out = await context.with(trace.setSpan(parent, span), run)
      const failed = isObject(out) && out.isError === true
      span.setAttribute('mcp.tool.error', failed)
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR })
      return out
    } catch (err) {
      span.setAttribute('mcp.tool.error', true)
      span.recordException(err instanceof Error ? err : String(err))
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) })
      throw err
    } finally {
      span.end()
    }
  }
  // not async itself: without an SDK a call costs no extra promise
  platform.extend(MCP_INVOCATION_WRAPPER, (info, run) => (noSdk() ? run() : traced(info, run)))
}
