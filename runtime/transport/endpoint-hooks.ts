import type { Context } from '../http/index.js'
import type { Broadcaster, Resource } from './broadcaster.js'
import type { JoinOptions, TransportKind } from './types.js'
import type { MessageRate } from './message-rate.js'
import type { AddressCap } from './address-cap.js'

/** What a hook sees of a connecting request (headers lowercase). */
export interface EndpointRequest {
  params: Record<string, string>
  query: URLSearchParams
  headers: Record<string, string>
  /** The transport a joining request uses (set for WebSocket upgrades, SSE GETs, long-polling joins). */
  transport?: TransportKind
}

/** How an endpoint maps requests to broadcasters and what it does with members. */
export interface EndpointHooks {
  /** The broadcaster id a request joins; throw a PlatformError to refuse it (runs before any upgrade). */
  resolve(req: EndpointRequest): string
  /**
   * Per-member options of a joining request (WebSocket upgrade, SSE GET, first long-polling GET),
   * after `resolve`; throw a PlatformError to refuse the join. Not called for POST, DELETE or polls.
   */
  joinOptions?(req: EndpointRequest): JoinOptions
  /** `className` of broadcasters this endpoint creates. */
  className?: string
  /** Once per broadcaster this endpoint creates (rooms announce leaves there). */
  setup?(b: Broadcaster): void
  /** After a resource is registered: greet it, tell the others. */
  joined?(r: Resource): void
  /**
   * A JSON value a member sent (a WebSocket frame or a POST body); returns the resources reached.
   * Without it WebSocket frames are ignored and POST is not routed.
   */
  message?(r: Resource, value: unknown): number
  /**
   * Hand `message` the text of each WebSocket frame and POST body as a string instead of parsed
   * JSON (an agent takes plain-text prompts); the endpoint then parses nothing itself.
   */
  rawText?: boolean
  /**
   * A POST that names no member (no resource uuid): answered by this hook instead of 400 (the
   * agent endpoint streams one turn back as SSE on the response). Its body follows `rawText`.
   */
  detachedPost?(ctx: Context, body: unknown): unknown
  /** Largest message a member may send (WebSocket frame, POST body); at most the server body limit. */
  maxMessageBytes?: number
  /**
   * Members one client address may hold per transport (endpoints may share one cap): a join beyond
   * it is refused with 429 (a WebSocket upgrade too, before upgrading).
   */
  addressCap?: AddressCap
  /** Messages per member: over it a WebSocket is closed with 1008, a POST answered 429. */
  messageRate?: MessageRate
}
