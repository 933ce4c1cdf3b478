/**
 * The admin MCP tools on /platform/mcp: each one is an admin route called from MCP, so a tool and
 * its route share one handler, one schema and one gate. Reads pass the read gate with the MCP
 * request's principal; writes (only with `platform.admin.mcp-write-tools`) pass the write gate and
 * are audited under that principal.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import type { Platform } from '../platform.js'
import { type Context } from '../http/index.js'
import { PlatformError, isWireError } from '../contracts/index.js'
import { AUTH_ERRORS, ReadGate, type Principal, type WriteSurface } from '../auth/index.js'
import { MCP_TOOLS, type HandlerContext } from '../mcp/index.js'
import type { AdminRequest, AdminRoute, JsonSchema } from './route-table.js'

type Args = Record<string, unknown>

interface AdminTool {
  name: string
  description: string
  /** The route this tool calls: `METHOD /path` below /api/admin. */
  route: string
  /** Tool arguments that are the route's path parameters (the rest are its query, or its body on a write). */
  params?: string[]
  write?: { action: string; target: (args: Args) => string }
  /**
   * The route answers one page: the result is `{result, nextCursor?}`, and the route's `cursor`
   * argument takes that nextCursor for the page after it (REST sends it as X-Next-Cursor).
   */
  paged?: true
}

const str = { type: 'string', minLength: 1 }

const READ_TOOLS: AdminTool[] = [
  { name: 'platform_overview', description: 'Counts of the platform now', route: 'GET /overview' },
  { name: 'platform_list_broadcasters', description: 'Every broadcaster', route: 'GET /broadcasters' },
  {
    name: 'platform_list_resources',
    description: 'Connected resources, optionally of one broadcaster',
    route: 'GET /resources'
  },
  { name: 'platform_list_agents', description: 'Every agent', route: 'GET /agents' },
  {
    name: 'platform_agent_sessions',
    description: 'Active sessions of one agent',
    route: 'GET /agents/{name}/sessions',
    params: ['name']
  },
  { name: 'platform_list_handlers', description: 'Endpoints and their broadcaster classes', route: 'GET /handlers' },
  { name: 'platform_list_interceptors', description: 'What intercepts traffic', route: 'GET /interceptors' },
  {
    name: 'platform_audit_log',
    description: 'The most recent control audit entries; pass the nextCursor of a result as cursor for older ones',
    route: 'GET /audit',
    paged: true
  },
  { name: 'platform_list_coordinators', description: 'Coordinators of the fleet', route: 'GET /coordinators' },
  { name: 'platform_query_journal', description: 'Coordination journal events', route: 'GET /journal' },
  { name: 'platform_list_tasks', description: 'A2A tasks', route: 'GET /tasks' },
  { name: 'platform_list_runtimes', description: 'AI runtimes', route: 'GET /runtimes' },
  { name: 'platform_ai_metrics', description: 'Connections, messages, rooms and AI sessions', route: 'GET /metrics' },
  { name: 'platform_list_mcp_tools', description: 'Tools served on /platform/mcp', route: 'GET /mcp/tools' }
]

const field = (args: Args, key: string): string => (typeof args[key] === 'string' ? (args[key] as string) : '')

const WRITE_TOOLS: AdminTool[] = [
  {
    name: 'platform_broadcast',
    description: 'Sends a message to every member of a broadcaster',
    route: 'POST /broadcasters/broadcast',
    write: { action: 'broadcast', target: (a) => field(a, 'broadcasterId') }
  },
  {
    name: 'platform_disconnect_resource',
    description: 'Closes a connected resource',
    route: 'DELETE /resources/{uuid}',
    params: ['uuid'],
    write: { action: 'disconnect', target: (a) => field(a, 'uuid') }
  },
  {
    name: 'platform_destroy_broadcaster',
    description: 'Disconnects every member of a broadcaster and removes it',
    route: 'DELETE /broadcasters/destroy',
    write: { action: 'destroy_broadcaster', target: (a) => field(a, 'id') }
  },
  {
    name: 'platform_cancel_task',
    description: 'Cancels a submitted or working A2A task',
    route: 'POST /tasks/{taskId}/cancel',
    params: ['taskId'],
    write: { action: 'cancel_task', target: (a) => field(a, 'taskId') }
  }
]

/** The MCP write tools have their own switch, re-read on every call like the REST one. */
const MCP_SURFACE: WriteSurface = {
  flagKey: 'platform.admin.mcp-write-tools',
  disabled: AUTH_ERRORS.ADMIN_WRITE_DISABLED,
  anonymous: AUTH_ERRORS.ADMIN_AUTH_REQUIRED
}

/** The tool's input: the route's path parameters, query or body properties, and their `required`. */
function inputSchema(tool: AdminTool, route: AdminRoute): JsonSchema {
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  for (const p of tool.params ?? []) {
    properties[p] = str
    required.push(p)
  }
  const own = (route.body ?? route.query) as { properties?: Record<string, unknown>; required?: string[] } | undefined
  Object.assign(properties, own?.properties ?? {})
  required.push(...(own?.required ?? []))
  // the broadcast body's message is any JSON value (a string is sent as is)
  if (route.body !== undefined && tool.name === 'platform_broadcast') {
    properties.message = { description: 'A string as is, anything else as JSON' }
  }
  const schema: JsonSchema = { type: 'object', properties, additionalProperties: false }
  if (required.length > 0) schema.required = [...new Set(required)]
  return schema
}

/** A refusal or failure as a tool error, carrying the same `{error, code, hint?}` as the REST answer. */
function toolError(err: PlatformError): Record<string, unknown> {
  const body = err.body()
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true }
}

// defaults (a limit's) and integer checks exactly as the route applies them to its query
const ajv = new Ajv2020({ strict: false, allErrors: false, useDefaults: true })

/** Adds the tools at the MCP area's MCP_TOOLS extension point, which its registry reads when it lists tools. */
export function installAdminMcpTools(platform: Platform, routes: readonly AdminRoute[]): void {
  const byKey = new Map(routes.map((r) => [`${r.method} ${r.path}`, r]))
  const reads = new ReadGate(platform.config, platform.principals)
  const tools = platform.config.get('platform.admin.mcp-write-tools') ? [...READ_TOOLS, ...WRITE_TOOLS] : READ_TOOLS
  for (const tool of tools) {
    const route = byKey.get(tool.route)
    if (route === undefined) throw new Error(`admin MCP tool ${tool.name}: no route ${tool.route}`)
    const schema = inputSchema(tool, route)
    const check: ValidateFunction = ajv.compile(schema)
    platform.extend(MCP_TOOLS, {
      name: tool.name,
      description: `${tool.description} (as ${tool.route.replace(' ', ' /api/admin')})`,
      inputSchema: schema,
      handler: (raw, hctx: HandlerContext) => {
        const args: Args = { ...raw }
        if (!check(args)) throw new Error(`invalid arguments: ${ajv.errorsText(check.errors)}`)
        return call(platform, reads, tool, route, args, hctx.caller ?? null)
      }
    })
  }
}

async function call(
  platform: Platform,
  reads: ReadGate,
  tool: AdminTool,
  route: AdminRoute,
  args: Args,
  caller: Principal | null
): Promise<unknown> {
  const params: Record<string, string> = {}
  const rest: Args = { ...args }
  for (const p of tool.params ?? []) {
    params[p] = String(args[p])
    delete rest[p]
  }
  const req: AdminRequest = {
    // MCP has no HTTP request: no route handler a tool calls reads it (the journal log route does, and has no tool)
    ctx: undefined as unknown as Context,
    params,
    query: route.body === undefined ? rest : {},
    body: route.body !== undefined ? rest : undefined,
    principal: undefined
  }
  const gate = route.gate
  if ('read' in gate) {
    try {
      reads.checkPrincipal(caller, gate.read)
      const out = await route.handler(req)
      if (tool.paged !== true) return out
      return req.nextCursor === undefined ? { result: out } : { result: out, nextCursor: req.nextCursor }
    } catch (err) {
      if (isWireError(err)) return toolError(err)
      throw err
    }
  }
  const { action, target: targetOf } = tool.write!
  const target = targetOf(args)
  const { writeGate } = platform
  let principal: Principal
  try {
    principal = writeGate.guardPrincipal(caller, action, target, MCP_SURFACE)
  } catch (err) {
    if (isWireError(err)) return toolError(err)
    throw err
  }
  req.principal = principal
  try {
    const out = await route.handler(req)
    await writeGate.done(principal, action, target, true)
    return out
  } catch (err) {
    if (!isWireError(err)) throw err
    await writeGate.done(principal, action, target, false, err.message)
    return toolError(err)
  }
}
