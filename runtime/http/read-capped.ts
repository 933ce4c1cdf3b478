/** Thrown by readCapped when a response body is larger than allowed. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`larger than ${limit} bytes`)
    this.name = 'BodyTooLargeError'
  }
}

/**
 * Reads a fetch response body as UTF-8 text, never holding more than `maxBytes`: a declared
 * length over the limit is refused before reading, a stream crossing it is cancelled.
 */
export async function readCapped(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN)
  if (declared > maxBytes) {
    await res.body?.cancel()
    throw new BodyTooLargeError(maxBytes)
  }
  if (res.body === null) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel()
      throw new BodyTooLargeError(maxBytes)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}
