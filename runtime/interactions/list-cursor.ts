import { PlatformError } from '../contracts/index.js'
import { INTERACTION_ID, ISO_UTC } from './store-input.js'
import { INTERACTION_ERRORS } from './errors.js'
import type { InteractionHeader } from './types.js'

/**
 * Lists run newest first on the sort key `[createdAt, id]` (the id breaks ties of one
 * millisecond). A cursor is the base64url of the last item's key, so every store pages the same
 * way, a page never repeats an item, and records saved meanwhile never shift a later page.
 */
export type SortKey = [createdAt: string, id: string]

export const sortKeyOf = (h: InteractionHeader): SortKey => [h.createdAt, h.id]

export function encodeCursor(key: SortKey): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url')
}

export function decodeCursor(cursor: string): SortKey {
  let key: unknown
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw new PlatformError(INTERACTION_ERRORS.INTERACTION_CURSOR_INVALID)
  }
  if (
    !Array.isArray(key) ||
    key.length !== 2 ||
    typeof key[0] !== 'string' ||
    !ISO_UTC.test(key[0]) ||
    typeof key[1] !== 'string' ||
    !INTERACTION_ID.test(key[1])
  )
    throw new PlatformError(INTERACTION_ERRORS.INTERACTION_CURSOR_INVALID)
  return key as SortKey
}

/** Code-unit order, which for the ASCII keys here is also LMDB's and Postgres' "C" byte order. */
export function compareDesc(a: SortKey, b: SortKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? 1 : -1
  return a[1] === b[1] ? 0 : a[1] < b[1] ? 1 : -1
}
