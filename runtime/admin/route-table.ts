/**
 * The admin route table: every route declared once (method, path, ajv schemas of its path
 * parameters, query and body, its gate, its handler) and mounted by one function, so the gates run
 * the same way everywhere and an OpenAPI document can be generated from the same declarations.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import type { Platform } from '../platform.js'
import { type Context } from '../http/index.js'
import { PlatformError, isWireError } from '../contracts/index.js'
import { ReadGate, type Principal, type ReadKind } from '../auth/index.js'
import { HTTP_ERRORS } from '../http/index.js'

export const ADMIN_BASE = '/api/admin'

export type JsonSchema = Record<string, unknown>

/** A read (`open`, `content`, `workspace`: see ReadGate) or a write through the write gate as `action`. */
export type RouteGate =
  | { read: ReadKind }
  | {
      write: string
      /** The audit entry's target, from the request as sent (runs before validation, like the gate). */
      target: (req: AdminRequest) => string
    }

/** What a handler gets: the request's parts after validation (query values coerced to their schema types). */
export interface AdminRequest {
  ctx: Context
  params: Record<string, string>
  query: Record<string, unknown>
  body: unknown
  /** The principal a write gate let through; undefined on reads. */
  principal: Principal | undefined
  /**
   * Set by a paged read to the cursor of the page after this one: the REST answer carries it in
   * `X-Next-Cursor`, the MCP tool calling the route in its result's `nextCursor`.
   */
  nextCursor?: string | undefined
}

export interface AdminRoute {
  method: 'GET' | 'POST' | 'DELETE'
  /** Below /api/admin, with `{name}` path parameters. */
  path: string
  summary: string
  gate: RouteGate
  params?: JsonSchema
  query?: JsonSchema
  body?: JsonSchema
  /** The success body's media type when it is not JSON (the handler writes it itself). */
  produces?: string
  /** What a 202 answer means, when the route may answer one. */
  accepted?: string
  /** Error statuses beyond the ones the gate and the schemas imply. */
  statuses?: number[]
  /** The error a body that fails `body` gets, when the route has its own (default INVALID_BODY). */
  invalidBody?: () => PlatformError
  /** The success body; a PlatformError thrown here is the answer (and, on a write, audited as a failure). */
  handler: (req: AdminRequest) => unknown
}

// query values arrive as strings: coerce them to the schema's types ('5' → 5); bodies are not coerced
const queryAjv = new Ajv2020({ strict: false, allErrors: false, coerceTypes: true, useDefaults: true })
const bodyAjv = new Ajv2020({ strict: false, allErrors: false })

function describe(e: ErrorObject | undefined): { name: string; detail: string } {
  if (e === undefined) return { name: '', detail: 'invalid' }
  const missing = e.keyword === 'required' ? String((e.params as { missingProperty?: string }).missingProperty) : ''
  const name = missing !== '' ? missing : e.instancePath.replace(/^\//, '').split('/')[0]!
  return { name, detail: missing !== '' ? 'is required' : (e.message ?? 'invalid') }
}

interface Compiled {
  params: ValidateFunction | undefined
  query: ValidateFunction | undefined
  body: ValidateFunction | undefined
}

/** Mounts `routes` on the platform's HTTP server; validators are compiled here, once. */
export function mountRoutes(platform: Platform, routes: readonly AdminRoute[]): void {
  const reads = new ReadGate(platform.config, platform.principals)
  const { writeGate } = platform
  // the audit entry of a write is committed before the answer, so an acknowledged write is
  // audited even if the process dies right after; a failed audit write is counted and logged by
  // the audit log itself and does not change the answer
  const audited = (p: Principal, action: string, target: string, ok: boolean, message?: string): Promise<void> =>
    writeGate.done(p, action, target, ok, message).catch(() => {})
  for (const route of routes) {
    const v: Compiled = {
      params: route.params === undefined ? undefined : queryAjv.compile(route.params),
      query: route.query === undefined ? undefined : queryAjv.compile(route.query),
      body: route.body === undefined ? undefined : bodyAjv.compile(route.body)
    }
    const handler = (ctx: Context): unknown => {
      const req: AdminRequest = { ctx, params: { ...ctx.params }, query: {}, body: ctx.body, principal: undefined }
      const gate = route.gate
      if ('read' in gate) {
        reads.check(ctx, gate.read)
        validate(route, v, req)
        return route.handler(req)
      }
      const target = gate.target(req)
      const principal = writeGate.guard(ctx, gate.write, target)
      req.principal = principal
      // every attempt past the gate is audited once, a failure with its message (a crash as such)
      const failed = async (err: unknown): Promise<never> => {
        const message = isWireError(err) ? err.message : 'Internal server error'
        await audited(principal, gate.write, target, false, message)
        throw err
      }
      let out: unknown
      try {
        validate(route, v, req)
        out = route.handler(req)
      } catch (err) {
        return failed(err)
      }
      const succeeded = async (value: unknown): Promise<unknown> => {
        await audited(principal, gate.write, target, true)
        return value
      }
      return out instanceof Promise ? out.then(succeeded, failed) : succeeded(out)
    }
    const path = ADMIN_BASE + route.path
    if (route.method === 'GET') platform.http.get(path, handler)
    else if (route.method === 'DELETE') platform.http.delete(path, handler, { body: 'json', optionalBody: true })
    // an empty body reaches the handler: the write gate runs before the body is validated
    else platform.http.post(path, handler, { body: 'json', optionalBody: true })
  }
}

/**
 * Mounts the admin routes another area owns (its own data, served under /api/admin with the same
 * gates, schemas and audit) and describes them, so the OpenAPI document lists them beside the
 * admin area's own table.
 */
export function mountAreaRoutes(platform: Platform, routes: readonly AdminRoute[]): void {
  mountRoutes(platform, routes)
  for (const r of routes) platform.http.describe(r.method, ADMIN_BASE + r.path, r)
}

function validate(route: AdminRoute, v: Compiled, req: AdminRequest): void {
  if (v.params !== undefined && !v.params(req.params)) {
    const d = describe(v.params.errors?.[0])
    throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, { name: d.name, detail: d.detail })
  }
  if (v.query !== undefined) {
    const q: Record<string, unknown> = {}
    for (const [k, val] of req.ctx.query) if (!Object.hasOwn(q, k)) q[k] = val
    if (!v.query(q)) {
      const d = describe(v.query.errors?.[0])
      throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, d)
    }
    req.query = q
  }
  if (v.body !== undefined && !v.body(req.body)) {
    if (route.invalidBody !== undefined) throw route.invalidBody()
    const e = v.body.errors?.[0]
    const d = describe(e)
    throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: d.name === '' ? d.detail : `'${d.name}' ${d.detail}` })
  }
}
