import { PlatformError } from '../contracts/index.js'
import { HTTP_ERRORS } from './errors.js'

/**
 * Reads a fetch response body as UTF-8 text, never holding more than `maxBytes`: a declared
 * length over the limit is refused before reading, a stream crossing it is cancelled; both throw
 * RESPONSE_TOO_LARGE.
 */
export async function readCapped(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN)
  if (declared > maxBytes) {
    await res.body?.cancel()
    throw new PlatformError(HTTP_ERRORS.RESPONSE_TOO_LARGE, { limit: maxBytes })
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
      throw new PlatformError(HTTP_ERRORS.RESPONSE_TOO_LARGE, { limit: maxBytes })
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}
