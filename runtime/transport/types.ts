import type { Principal } from '../auth/index.js'

/** The wire names of the three transports, as `listResources()` reports them. */
export type TransportKind = 'WEBSOCKET' | 'SSE' | 'LONG_POLLING'

/** One row of `listBroadcasters()`. */
export interface BroadcasterInfo {
  id: string
  className: string
  resourceCount: number
  isDestroyed: boolean
}

/** One row of `listResources()`. */
export interface ResourceInfo {
  uuid: string
  transport: TransportKind
  isSuspended: boolean
  isResumed: boolean
  broadcaster: string
}

/** Per-member choices a joining request makes (read once, when it joins). */
export interface JoinOptions {
  /** Its join and departure are not announced to the other members (it still receives everything). */
  silent?: boolean
  /** The principal that joined (kept on the resource). */
  principal?: string
  /** That principal's roles, as its credentials established them (kept on the resource). */
  roles?: readonly string[]
}

/** Why a resource went away; the `reason` of ResourceDisconnected. */
export const Reason = {
  closed: 'closed by client',
  disconnected: 'disconnected',
  left: 'left',
  slow: 'slow consumer',
  timeout: 'timeout',
  tooBig: 'message too big',
  rateLimited: 'rate limit exceeded',
  invalid: 'invalid frame',
  queueOverflow: 'queue overflow',
  shutdown: 'server shutting down',
  destroyed: 'broadcaster destroyed',
  /** What the connection talks to does not exist (an agent unloaded by hot reload). */
  notFound: 'not found'
} as const
export type Reason = (typeof Reason)[keyof typeof Reason]

/** What a room join guard sees of a joining request. */
export interface RoomJoin {
  room: string
  /** The resolved principal, or null for an anonymous client (possible when rooms.auth is `open`). */
  principal: Principal | null
  transport: TransportKind
  /** Request headers, lowercase. */
  headers: Readonly<Record<string, string>>
}

/** `allow: false` refuses the join with 403 PLT_ERR_ROOM_JOIN_DENIED and `reason`. */
export type RoomJoinVerdict = { allow: true } | { allow: false; reason: string }

/**
 * Added at ROOM_JOIN_GUARD (by governance, an embedding application or a test): asked, synchronously,
 * before each room join on any transport (after the room's auth policy passed).
 */
export type RoomJoinGuard = (join: RoomJoin) => RoomJoinVerdict
