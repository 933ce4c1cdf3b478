import type { CancelSignal } from '../plugins/index.js'
import type { Principal } from '../auth/index.js'
import type { Session } from './sessions.js'
import type { JsonObject } from './wire.js'

export { isObject, LOG_LEVELS, type JsonObject, type LogLevel } from './wire.js'
export interface JsonRpcMessage {
  jsonrpc: '2.0'
  id?: string | number | null
  method?: string
  params?: JsonObject
  result?: unknown
  error?: unknown
}

export const MODERN_VERSION = '2026-07-28'
export const SESSION_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const
export const LATEST_SESSION_VERSION = '2025-11-25'
export const META_VERSION = 'io.modelcontextprotocol/protocolVersion'
export const META_CAPS = 'io.modelcontextprotocol/clientCapabilities'
export const META_CLIENT = 'io.modelcontextprotocol/clientInfo'
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel'
export const META_SERVER = 'io.modelcontextprotocol/serverInfo'
export const META_SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId'
export const TASKS_EXT = 'io.modelcontextprotocol/tasks'
export const APPS_EXT = 'io.modelcontextprotocol/ui'
export const APP_MIME = 'text/html;profile=mcp-app'

/**
 * Where the messages a request produces besides its response go: progress and log notifications,
 * and server-to-client requests (session dialect: sampling, elicitation, roots). A transport gives
 * each request its own sink, so nothing of one request can reach another client.
 */
export interface Sink {
  notify(msg: JsonObject): void
  /** Sends a request to the client and resolves with its result; absent when the channel cannot carry one. */
  request?: (method: string, params: unknown, signal?: CancelSignal) => Promise<unknown>
  /** False when this channel cannot stream (a POST whose client accepts only JSON). */
  canStream?: boolean
}

/** One MCP endpoint (`/platform/mcp` or an agent's path): what it serves. */
export interface EndpointRef {
  path: string
  /** The agent this endpoint serves; undefined for the platform-wide endpoint. */
  agent?: string
}

/** Everything dispatch needs about one incoming request, whatever the transport. */
export interface CallContext {
  endpoint: EndpointRef
  transport: 'http' | 'ws'
  /** Lowercase request headers (HTTP only). */
  headers?: Record<string, string>
  session?: Session
  principal?: string | null
  /** The whole principal behind `principal` (its roles reach the admin write gate). */
  caller?: Principal | null
  /** The client's network address (session caps count anonymous callers by it). */
  address?: string
  sink: Sink
  signal: CancelSignal
  /** Aborts this request (transport-provided; notifications/cancelled uses it). */
  cancel?: () => void
  /** Set by dispatch for transports: a session created by this request (initialize). */
  createdSession?: Session
  /** Stateless requests: the per-request `_meta` envelope after validation. */
  meta?: JsonObject
  /** WebSocket: the bearer token of the upgrade request (HTTP guards see the headers instead). */
  bearer?: string
}
