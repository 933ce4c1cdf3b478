import type { Platform } from '../platform.js'
import { AreaKey, ExtensionPoint } from '../contracts/index.js'
import type { Transport } from './transport.js'
import type { RoomJoinGuard } from './types.js'

/** The platform's broadcasters and connected resources, provided by the transport area. */
export const TRANSPORT = new AreaKey<Transport>('transport')

/** Asked before every room join (added by an embedding application); none lets the room's auth policy decide alone. */
export const ROOM_JOIN_GUARD = new ExtensionPoint<RoomJoinGuard>('transport', 'room-join-guard', true)

/** The transport installed on `platform` (throws when the transport area is not installed). */
export function transportOf(platform: Platform): Transport {
  return platform.area(TRANSPORT)
}
