import { PlatformError } from '../contracts/index.js'
import { HTTP_ERRORS } from './errors.js'

/**
 * Parses a JSON body after a byte scan that rejects nesting beyond `maxDepth`, so a hostile
 * 100 000-deep document never reaches a recursive consumer (ajv, JSON.stringify, handlers).
 */
export function parseJsonBody(buf: Buffer, maxDepth: number): unknown {
  let depth = 0
  let inString = false
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: skip the escaped byte
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) throw new PlatformError(HTTP_ERRORS.JSON_TOO_DEEP, { limit: maxDepth })
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  try {
    return JSON.parse(buf.toString('utf8'))
  } catch (e) {
    throw new PlatformError(HTTP_ERRORS.MALFORMED_JSON, { detail: (e as Error).message.slice(0, 200) })
  }
}
