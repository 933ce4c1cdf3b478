/** The wire names of the three transports (reference `resources` record). */
export type TransportKind = 'WEBSOCKET' | 'SSE' | 'LONG_POLLING'

/** One row of `listBroadcasters()` (reference §2.2 `broadcasters`). */
export interface BroadcasterInfo {
  id: string
  className: string
  resourceCount: number
  isDestroyed: boolean
}

/** One row of `listResources()` (reference §2.2 `resources`). */
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
}

/** Why a resource went away; the `reason` of ResourceDisconnected. */
export const Reason = {
  closed: 'closed by client',
  disconnected: 'disconnected',
  left: 'left',
  slow: 'slow consumer',
  timeout: 'timeout',
  tooBig: 'message too big',
  invalid: 'invalid frame',
  queueOverflow: 'queue overflow',
  shutdown: 'server shutting down',
  destroyed: 'broadcaster destroyed'
} as const
export type Reason = typeof Reason[keyof typeof Reason]
