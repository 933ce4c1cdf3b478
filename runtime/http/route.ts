import type { RouteStats } from '../observability/index.js'
import type { Context } from './context.js'

// What a route is: its handler, its methods and its options, as HttpServer registers them.

export type Handler = (ctx: Context) => unknown
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'HEAD'

export interface RouteOptions {
  /** 'json' parses the body (empty body allowed when `optionalBody`), 'raw' hands over bytes. */
  body?: 'json' | 'raw'
  optionalBody?: boolean
  /** Override of platform.server.body-limit-bytes for this route. */
  bodyLimit?: number
  /**
   * A web page may reach this route: a browser `Origin` the platform.server.allowed-origins rule
   * refuses gets 403 before the body is read.
   */
  checkOrigin?: boolean
  /** The 413 body for this route when it is not the REST catalogue's (a JSON-RPC endpoint answers in JSON-RPC). */
  tooLarge?: (limit: number) => { body: string; contentType: string }
}

export interface MethodEntry {
  handler: Handler
  opts: RouteOptions
  stats: RouteStats
}

export interface RouteEntry {
  pattern: string
  paramNames: string[]
  methods: Map<string, MethodEntry>
  allow: string
}
