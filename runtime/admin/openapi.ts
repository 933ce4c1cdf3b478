/**
 * The OpenAPI 3.1 document of the admin API, generated from the route table: paths, parameters and
 * request bodies from each route's ajv schemas (JSON Schema 2020-12, the dialect OpenAPI 3.1 uses),
 * security and error responses from its gate. Routes other areas register themselves (governance,
 * interactions, and workflows through `mountAreaRoutes`) come from the descriptions they handed the
 * HTTP server.
 */
import type { DocumentedRoute, RouteDoc } from '../http/index.js'
import { ADMIN_BASE, type AdminRoute, type JsonSchema } from './route-table.js'

/** One operation to document: an admin route or another area's described route. */
interface Op {
  method: string
  /** The full path, with `{name}` parameters. */
  path: string
  doc: RouteDoc
}

const ERROR_REF = { $ref: '#/components/responses/Error' }
const AUTH = [{ bearer: [] }, { platformAuth: [] }]

function operationId(route: Op): string {
  // named below /api/admin (or /api): /api/admin/overview is getOverview, /api/interactions getInteractions
  const words = route.path
    .replace(/^\/api(\/admin)?(?=\/)/, '')
    .split('/')
    .filter((s) => s !== '')
    .map((s) =>
      s.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())
    )
  return route.method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')
}

function parameters(route: Op): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  for (const m of route.path.matchAll(/\{([^}]+)\}/g))
    out.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })
  const q = route.doc.query
  if (q !== undefined) {
    const props = (q.properties ?? {}) as Record<string, JsonSchema>
    const required = new Set((q.required ?? []) as string[])
    for (const [name, schema] of Object.entries(props))
      out.push({ name, in: 'query', required: required.has(name), schema })
  }
  return out
}

function operation(route: Op): Record<string, unknown> {
  const { doc } = route
  const gate = doc.gate
  const write = 'write' in gate
  const op: Record<string, unknown> = { operationId: operationId(route), summary: doc.summary }
  const params = parameters(route)
  if (params.length > 0) op.parameters = params
  if (doc.body !== undefined)
    op.requestBody = {
      required: doc.optionalBody !== true,
      content: { 'application/json': { schema: doc.body } }
    }
  const responses: Record<string, unknown> = {
    '200': {
      description: 'OK',
      content: {
        [doc.produces ?? 'application/json']: { schema: doc.produces === undefined ? {} : { type: 'string' } }
      }
    }
  }
  if (doc.accepted !== undefined)
    responses['202'] = { description: doc.accepted, content: { 'application/json': { schema: {} } } }
  if (params.length > 0 || doc.body !== undefined || write) responses['400'] = ERROR_REF
  responses['401'] = ERROR_REF
  if (write || gate.read === 'operator') responses['403'] = ERROR_REF
  if (route.path.includes('{') || write) responses['404'] = ERROR_REF
  for (const s of doc.statuses ?? []) responses[String(s)] = ERROR_REF
  op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)))
  // open and owner reads need a principal only under http-read-auth-required; content and workspace reads by default
  op.security = write || (gate.read !== 'open' && gate.read !== 'owner') ? AUTH : [{}, ...AUTH]
  op['x-platform-gate'] = write ? { write: gate.write } : { read: gate.read }
  return op
}

export function openApiDocument(
  routes: readonly AdminRoute[],
  version: string,
  described: readonly DocumentedRoute[] = [],
  /** The error codes of the core and every installed area (`platform.errors`): the Error schema's enum. */
  codes: readonly string[] = []
): Record<string, unknown> {
  const ops: Op[] = [
    ...routes.map((r) => ({ method: r.method, path: ADMIN_BASE + r.path, doc: r })),
    ...described.map((r) => ({ method: r.method, path: r.pattern, doc: r.doc }))
  ]
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of ops) {
    const p = (paths[r.path] ??= {})
    p[r.method.toLowerCase()] = operation(r)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'agent-platform admin API',
      version,
      description:
        'The admin control plane under /api/admin (governance included) and /api/interactions, generated from the route table and the routes areas describe.'
    },
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API token from platform.auth.tokens, or a JWT' },
        platformAuth: { type: 'apiKey', in: 'header', name: 'X-Platform-Auth' }
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error', 'code'],
          properties: {
            error: { type: 'string' },
            code:
              codes.length > 0
                ? { type: 'string', enum: [...codes] }
                : { type: 'string', pattern: '^PLT_ERR_[A-Z0-9_]+$' },
            hint: { type: 'string' }
          }
        }
      },
      responses: {
        Error: {
          description: 'An error from the catalogue',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }
        }
      }
    }
  }
}
