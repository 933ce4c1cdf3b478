import type { Platform } from '../platform.js'
import type { CancelSignal } from '../plugins/index.js'
import type { InvocationWrapper } from './calls.js'
import type { McpRegistry } from './registry.js'
import type { RequestStateCodec } from './request-state.js'
import type { SessionStore, Session } from './sessions.js'
import type { Subscriptions } from './subscriptions.js'
import type { TaskManager } from './tasks.js'
import type { CallContext, JsonObject } from './types.js'

export interface CoreOptions {
  serverName: string
  serverVersion: string
  instructions?: string
  cacheTtlMs: number
  cacheScope: 'public' | 'private'
  syncWindowMs: number
}

/**
 * What the dispatch files (the two dialects, invocations, runners, task calls) use of the core.
 * McpCore implements it; they import this instead of core.ts, which imports them.
 */
export interface CoreState {
  readonly platform: Platform
  readonly registry: McpRegistry
  readonly sessions: SessionStore
  readonly tasks: TaskManager
  readonly codec: RequestStateCodec
  readonly opts: CoreOptions
  readonly subscriptions: Subscriptions
  readonly wrap: InvocationWrapper
  /** The session a session-dialect request names in its Mcp-Session-Id header. */
  sessionFromHeader(ctx: CallContext): Session
  /** Sends a server-to-client request on a session's notification channel and awaits its answer. */
  requestOverChannel(s: Session, method: string, params: unknown, signal?: CancelSignal): Promise<unknown>
  /** Cached per endpoint until the registry changes: every stateless result carries it. */
  serverInfo(ctx: CallContext): JsonObject
  /** The tools/list entries of an endpoint for one protocol version, built once per registry change. */
  listedTools(ctx: CallContext, version: string): JsonObject[]
}
