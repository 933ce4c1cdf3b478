/** Runtimes, the MCP catalogue, plugins and the control audit log. */
import { PlatformError } from '../contracts/index.js'
import { CALLERS, HTTP_ERRORS, setLogPageHeaders, type Callers } from '../http/index.js'
import type { AdminDeps } from './admin-deps.js'
import { ADMIN_BASE, type AdminRoute } from './route-table.js'
import { ADMIN_ERRORS } from './errors.js'

export const AUDIT_DEFAULT_LIMIT = 100
export const AUDIT_MAX_LIMIT = 10_000

/** `{name, description, required}` per property of a tool's input schema. */
function params(schema: Record<string, unknown>): { name: string; description: string; required: boolean }[] {
  const props = (schema.properties ?? {}) as Record<string, { description?: unknown }>
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : [])
  return Object.entries(props).map(([name, p]) => ({
    name,
    description: typeof p?.description === 'string' ? p.description : '',
    required: required.has(name)
  }))
}

export function catalogRoutes(d: AdminDeps): AdminRoute[] {
  const view = () => d.mcp?.registry.view(undefined)
  return [
    {
      method: 'GET',
      path: '/runtimes',
      summary: 'Every AI runtime: {name, priority, isAvailable, capabilities, models}',
      gate: { read: 'open' },
      handler: () => d.ai.runtimes()
    },
    {
      method: 'GET',
      path: '/runtimes/active',
      summary: 'The runtime platform.ai.runtime selects',
      gate: { read: 'open' },
      handler: () => {
        const active = d.ai.activeRuntime()
        const info = active === undefined ? undefined : d.ai.runtimes().find((r) => r.name === active.name)
        if (info === undefined) throw new PlatformError(ADMIN_ERRORS.NO_ACTIVE_RUNTIME)
        return info
      }
    },
    {
      method: 'GET',
      path: '/mcp/tools',
      summary: 'Tools served on /platform/mcp: {name, description, params, server (for a tool of another MCP server)}',
      gate: { read: 'open' },
      handler: () =>
        (view()?.tools ?? []).map((t) => ({
          name: t.name,
          description: t.description,
          params: params(t.inputSchema),
          ...(t.server !== undefined ? { server: t.server } : {})
        }))
    },
    {
      method: 'GET',
      path: '/mcp/servers',
      summary:
        'The other MCP servers of platform.mcp.servers: {name, transport, state (connecting, connected, down), error, expose, connectedAt, tools, refused}',
      gate: { read: 'open' },
      handler: () => d.mcp?.external.status() ?? []
    },
    {
      method: 'GET',
      path: '/mcp/resources',
      summary: 'Resources (and templates) served on /platform/mcp: {uri, name, description, mimeType}',
      gate: { read: 'open' },
      handler: () => {
        const v = view()
        if (v === undefined) return []
        return [...v.resources, ...v.templates].map((r) => ({
          uri: r.uri,
          name: r.name,
          description: r.description,
          mimeType: r.mimeType
        }))
      }
    },
    {
      method: 'GET',
      path: '/mcp/prompts',
      summary: 'Prompts served on /platform/mcp: {name, description}',
      gate: { read: 'open' },
      handler: () => (view()?.prompts ?? []).map((p) => ({ name: p.name, description: p.description }))
    },
    {
      method: 'GET',
      path: '/plugins',
      summary:
        'Every plugin: name, version, sandbox tier, state (live, failed with its error, disabled), contributions',
      gate: { read: 'open' },
      handler: () =>
        d.platform.plugins.status().map((s) => ({
          name: s.name,
          version: s.version ?? null,
          tier: s.sandbox ?? null,
          state: s.state,
          error: s.error ?? null,
          contributes: s.contributes
        }))
    },
    {
      method: 'GET',
      path: '/audit',
      summary:
        "The most recent control audit entries, oldest first (in cluster mode every node's, each with its `node`); X-Next-Cursor (and Link) give the page before them while older entries remain. X-Anonymous-Denied counts the denied attempts without a principal since start-up, X-Anonymous-Denied-Dropped those of them not kept (sampled apart, they never push an entry out)",
      gate: { read: 'content' },
      query: {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: AUDIT_MAX_LIMIT, default: AUDIT_DEFAULT_LIMIT },
          cursor: { type: 'string', description: 'The X-Next-Cursor of the previous page' },
          callers: {
            enum: Object.keys(CALLERS),
            default: 'all',
            description: 'authenticated: only attempts by a known principal; anonymous: only the sampled ones without'
          }
        }
      },
      handler: async (req) => {
        const { ctx, query } = req
        const limit = query.limit as number
        const callers = query.callers as Callers
        const page = await d.platform.audit.read(limit, query.cursor as string | undefined, CALLERS[callers])
        if (page === undefined) throw new PlatformError(HTTP_ERRORS.INVALID_CURSOR, { what: 'the control audit' })
        req.nextCursor = page.nextCursor
        // an MCP tool call has no HTTP answer to carry headers
        if (ctx !== undefined)
          setLogPageHeaders(
            ctx,
            `${ADMIN_BASE}/audit`,
            { limit, callers: callers === 'all' ? undefined : callers },
            { ...page, anonymousDenied: d.platform.audit.anonymousDenied }
          )
        return page.entries
      }
    }
  ]
}
