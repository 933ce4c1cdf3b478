import { trace, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api'

/** One span as the recording tracer saw it. */
export interface RecordedSpan {
  name: string
  attributes: Record<string, unknown>
  status?: { code: number; message?: string }
  ended: boolean
}

/**
 * A minimal recording tracer installed as the global provider: enough to see the spans the code
 * makes through @opentelemetry/api. Returns the list it fills.
 */
export function recordSpans(): RecordedSpan[] {
  const spans: RecordedSpan[] = []
  const provider: TracerProvider = {
    getTracer: (): Tracer => ({
      startSpan(name: string): Span {
        const rec: RecordedSpan = { name, attributes: {}, ended: false }
        spans.push(rec)
        const span = {
          isRecording: () => true,
          setAttributes(a: Record<string, unknown>) {
            Object.assign(rec.attributes, a)
            return span
          },
          setAttribute(k: string, v: unknown) {
            rec.attributes[k] = v
            return span
          },
          setStatus(s: { code: number; message?: string }) {
            rec.status = s
            return span
          },
          end() {
            rec.ended = true
          }
        }
        return span as unknown as Span
      },
      startActiveSpan: (() => {
        throw new Error('unused')
      }) as never
    })
  }
  trace.setGlobalTracerProvider(provider)
  return spans
}
