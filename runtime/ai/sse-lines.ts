/**
 * The `data:` payloads of a server-sent-event stream, one per event (multi-line data joined by
 * newlines). `onBytes` is called for every chunk read, so the caller can run an idle timer. A
 * line over `maxLineBytes` throws: a stream that never sends a newline must not be buffered whole.
 */
export class SseError extends Error {}

export async function * parseSse (body: ReadableStream<Uint8Array>, maxLineBytes: number, onBytes: () => void): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let buf = ''
  let data: string[] = []
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    onBytes()
    buf += decoder.decode(bytes, { stream: true })
    let nl: number
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '')
      buf = buf.slice(nl + 1)
      if (line === '') { if (data.length > 0) { yield data.join('\n'); data = [] } continue }
      if (line.startsWith(':')) continue
      if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      else if (!/^(event|id|retry)(:|$)/.test(line)) throw new SseError(`a line that is not server-sent events: ${line.slice(0, 120)}`)
    }
    if (buf.length > maxLineBytes) throw new SseError(`an event line longer than ${maxLineBytes} bytes`)
  }
  buf += decoder.decode()
  if (buf.startsWith('data:')) data.push(buf.slice(5).replace(/^ /, ''))
  if (data.length > 0) yield data.join('\n')
}
