/**
 * The opaque cursor of a log read page by page: the log's name and, per part of the log, the key
 * every entry of the next page sorts below. Fixed bounds (not offsets) keep entries appended
 * meanwhile from shifting a later page or showing up in it.
 */
import type { LogKey } from './retained-log.js'

/** Longer strings are not cursors this module wrote: refused before decoding. */
const CURSOR_MAX_CHARS = 512

export function encodeLogCursor(log: string, bounds: readonly LogKey[]): string {
  return Buffer.from(JSON.stringify([log, ...bounds])).toString('base64url')
}

/** The bounds of a cursor written for `log` with `parts` parts; undefined for anything else. */
export function decodeLogCursor(cursor: string, log: string, parts: number): LogKey[] | undefined {
  if (cursor.length > CURSOR_MAX_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined
  let v: unknown
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!Array.isArray(v) || v.length !== parts + 1 || v[0] !== log) return undefined
  const bounds = v.slice(1) as unknown[]
  for (const b of bounds)
    if (!Array.isArray(b) || b.length !== 2 || !b.every((n) => Number.isSafeInteger(n) && (n as number) >= 0))
      return undefined
  return bounds as LogKey[]
}
