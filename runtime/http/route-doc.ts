/**
 * What an area tells the OpenAPI generator about a route it registered itself (the admin area
 * documents its own table): the route's gate, the JSON Schemas (2020-12) of its query and body.
 */
export type JsonSchema = Record<string, unknown>

export interface RouteDoc {
  summary: string
  /**
   * A read: `open` (a principal only under http-read-auth-required), `owner` (anyone, each sees
   * their own records), `content` or `workspace` (a principal by default), `operator` (a principal
   * with the admin role, always); or a write and what gates it.
   */
  gate: { read: 'open' | 'owner' | 'content' | 'workspace' | 'operator' } | { write: string }
  query?: JsonSchema
  body?: JsonSchema
  /** The body may be left out. */
  optionalBody?: boolean
  /** The success body's media type when it is not JSON. */
  produces?: string
  /** What a 202 answer means, when the route may answer one instead of 200. */
  accepted?: string
  /** Error statuses beyond the ones the gate and the schemas imply (503 when a service is not installed). */
  statuses?: number[]
}

export interface DocumentedRoute {
  method: string
  pattern: string
  doc: RouteDoc
}
