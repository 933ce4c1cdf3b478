import { PlatformError } from '../contracts/index.js'
import { AI_ERRORS } from './errors.js'

/**
 * The `data:` payloads of a server-sent-event stream, one per event (multi-line data joined by
 * newlines). `onBytes` is called for every chunk read, so the caller can run an idle timer. A
 * stream that never sends a newline must not be buffered whole: a line over `maxLineBytes`, or
 * one that is not server-sent events, throws AI_SSE_MALFORMED.
 */
export async function* parseSse(
  body: ReadableStream<Uint8Array>,
  maxLineBytes: number,
  onBytes: () => void,
  signal: AbortSignal
): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let buf = ''
  let data: string[] = []
  for await (const bytes of reads(body, signal)) {
    onBytes()
    buf += decoder.decode(bytes, { stream: true })
    let nl: number
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '')
      buf = buf.slice(nl + 1)
      if (line === '') {
        if (data.length > 0) {
          yield data.join('\n')
          data = []
        }
        continue
      }
      if (line.startsWith(':')) continue
      if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      else if (!/^(event|id|retry)(:|$)/.test(line))
        throw new PlatformError(AI_ERRORS.AI_SSE_MALFORMED, {
          detail: `a line that is not server-sent events: ${line.slice(0, 120)}`
        })
    }
    if (buf.length > maxLineBytes)
      throw new PlatformError(AI_ERRORS.AI_SSE_MALFORMED, { detail: `an event line longer than ${maxLineBytes} bytes` })
  }
  buf += decoder.decode()
  if (buf.startsWith('data:')) data.push(buf.slice(5).replace(/^ /, ''))
  if (data.length > 0) yield data.join('\n')
}

/**
 * The body's chunks, ending with the signal's reason once it aborts. Node 20's fetch leaves a
 * pending read hanging when its request is aborted after the body arrived, so every read races
 * the signal instead of trusting the body to error.
 */
async function* reads(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  const reader = body.getReader()
  let onAbort: (() => void) | undefined
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason)
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
  })
  aborted.catch(() => {})
  try {
    while (true) {
      const r = await Promise.race([reader.read(), aborted])
      if (r.done) return
      yield r.value
    }
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort)
    reader.cancel().catch(() => {})
  }
}
