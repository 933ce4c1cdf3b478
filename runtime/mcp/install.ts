import type { Area, Platform } from '../platform.js'
import { abortSignalOf, type ToolDescriptor } from '../plugins/index.js'
import type { Context } from '../http/index.js'
import { McpCore } from './core.js'
import { MCP_ERRORS } from './errors.js'
import { HttpTransport } from './http-transport.js'
import { McpRegistry } from './registry.js'
import type { InvokeContext } from './entries.js'
import type { HandlerContext } from './registrations.js'
import { RequestStateCodec } from './request-state.js'
import { SessionStore } from './sessions.js'
import { sessionRecordsFromConfig, tasksStoreFromConfig } from './stores-from-config.js'
import { TaskManager } from './tasks.js'
import { WsTransport } from './ws-transport.js'
import type { EndpointRef } from './types.js'
import { McpServer } from './mcp-server.js'
import { MCP, MCP_BEFORE_DISPATCH, MCP_HTTP_GUARDS, MCP_INVOCATION_WRAPPER, MCP_TOOLS } from './key.js'
import { NO_WRAP } from './calls.js'
import { installMcpExtras } from './extras.js'
import { MCP_CONFIG_KEYS } from './config-keys.js'
import { externalServers } from './external-config.js'
import { ExternalServers } from './external-servers.js'

const PLATFORM_PATH = '/platform/mcp'
const AGENT_PATTERN = '/platform/agent/{name}/mcp'

function requestStateKey(platform: Platform): Buffer {
  const configured = platform.config.get('platform.mcp.request-state-key')
  if (configured !== undefined) return Buffer.from(configured, 'utf8')
  const db = platform.store.db<string, string>('mcp-keys')
  const existing = db.get('request-state')
  if (existing !== undefined) return Buffer.from(existing, 'base64')
  const key = RequestStateCodec.newKey()
  db.putSync('request-state', key.toString('base64'))
  return key
}

/** Installs the MCP server: `/platform/mcp`, per-agent endpoints, POST/GET/DELETE and WebSocket on each. */
export async function installMcp(platform: Platform): Promise<McpServer | undefined> {
  const cfg = platform.config
  if (cfg.get('platform.mcp.enabled') === false) return undefined
  // checked first: a wrong server entry stops start-up before anything is opened
  const serverConfigs = externalServers(cfg.get('platform.mcp.servers'), process.env)
  const logger = platform.logger.child({ area: 'mcp' })
  const handlerCtx = (ctx: InvokeContext): HandlerContext => ({
    ...ctx,
    get signal() {
      return abortSignalOf(ctx.signal)
    },
    // handlers registered in code may read any key, including ones the platform does not know
    config: { get: <T>(key: string) => cfg.values[key] as T },
    logger,
    broadcaster: (topic: string) => ({
      id: topic,
      broadcast: (message: unknown) => {
        platform.http.app.publish(topic, typeof message === 'string' ? message : JSON.stringify(message))
      }
    })
  })
  const registry = new McpRegistry(
    platform.plugins,
    handlerCtx,
    platform.store.db<ToolDescriptor[], string>('mcp-plugin-tools'),
    () => platform.extensions(MCP_TOOLS)
  )
  const maxSessions = cfg.get('platform.mcp.max-sessions')
  const records = await sessionRecordsFromConfig(platform)
  const sessions = new SessionStore(
    records,
    cfg.get('platform.mcp.session-ttl-minutes') * 60_000,
    {
      max: maxSessions,
      perPrincipal: cfg.get('platform.mcp.sessions.max-per-principal'),
      perAddress: cfg.get('platform.mcp.sessions.max-per-address'),
      reserve: cfg.get('platform.mcp.sessions.authenticated-reserve') ?? Math.floor(maxSessions / 10)
    },
    {
      capabilitiesBytes: cfg.get('platform.mcp.sessions.max-capabilities-bytes'),
      clientInfoBytes: cfg.get('platform.mcp.sessions.max-client-info-bytes'),
      subscriptions: cfg.get('platform.mcp.sessions.max-subscriptions'),
      uriBytes: cfg.get('platform.mcp.sessions.max-uri-bytes')
    },
    {
      onError: (err, what) => logger.warn({ err }, `MCP sessions: a ${what} of the session store failed`),
      backplane: platform.backplane()
    }
  )
  const tasks = new TaskManager(
    platform.bus,
    cfg.get('platform.mcp.tasks.ttl-ms'),
    cfg.get('platform.mcp.tasks.poll-interval-ms')
  )
  const sharedTasks = await tasksStoreFromConfig(platform)
  if (sharedTasks !== undefined)
    tasks.shareIn(
      {
        store: sharedTasks,
        backplane: platform.backplane(),
        onLeaseError: (err, what) => logger.warn({ err }, `MCP tasks: ${what}; retrying`)
      },
      (err) => logger.error({ err }, 'MCP task write to PostgreSQL failed')
    )
  const codec = new RequestStateCodec(
    requestStateKey(platform),
    cfg.get('platform.mcp.request-state-ttl-seconds') * 1000
  )
  const instructions = cfg.get('platform.mcp.instructions')
  const core = new McpCore(
    platform,
    registry,
    sessions,
    tasks,
    codec,
    {
      serverName: 'agent-platform',
      serverVersion: platform.version,
      ...(instructions !== undefined ? { instructions } : {}),
      cacheTtlMs: cfg.get('platform.mcp.cache-ttl-ms'),
      cacheScope: cfg.get('platform.mcp.cache-scope'),
      syncWindowMs: cfg.get('platform.mcp.tasks.sync-window-ms')
    },
    {
      // read at use time: the extras and the embedding application add them after this install
      beforeDispatch: () => platform.extensions(MCP_BEFORE_DISPATCH),
      httpGuards: () => platform.extensions(MCP_HTTP_GUARDS),
      wrap: () => platform.extensions(MCP_INVOCATION_WRAPPER)[0] ?? NO_WRAP
    }
  )
  const external = await ExternalServers.create(serverConfigs, registry, logger.child({ part: 'mcp-servers' }))
  const server = new McpServer(core, registry, external)
  // agent name → endpoint, rebuilt on PluginsChanged so requests never walk the plugin registry
  let agentIndex: Map<string, string> | undefined
  const agents = (): Map<string, string> =>
    (agentIndex ??= new Map(platform.plugins.agents().map((a) => [a.name, a.endpoint])))
  platform.bus.on('PluginsChanged', () => {
    agentIndex = undefined
    registry.invalidate()
    mountCustomAgentPaths()
  })
  platform.onClose(async () => {
    sessions.close()
    tasks.close()
    await external.close()
  })
  if (external.size > 0) {
    // a server down at start is retried in the background: the platform serves without its tools meanwhile
    platform.addReadiness('mcp-servers', () => (external.allConnected ? true : 'degraded'))
    await external.start()
  }

  // the platform-wide browser-origin rule (platform.server.allowed-origins)
  const origins = platform.http.origins
  const http = new HttpTransport(platform, core, origins)
  const ws = new WsTransport(platform, core, origins)
  const bodyLimit = cfg.get('platform.mcp.body-limit-bytes')

  /** An agent is served at its `endpoint` when that ends in `/mcp`, else at /platform/agent/{name}/mcp. */
  const customPath = (endpoint: string): string | undefined =>
    endpoint.endsWith('/mcp') && endpoint.startsWith('/') ? endpoint : undefined
  const agentAt = (name: string | undefined): EndpointRef | undefined => {
    if (name === undefined) return undefined
    const endpoint = agents().get(name)
    if (endpoint === undefined || customPath(endpoint) !== undefined) return undefined
    return { path: `/platform/agent/${name}/mcp`, agent: name }
  }
  const agentByPath = (path: string): EndpointRef | undefined => {
    for (const [name, endpoint] of agents()) if (customPath(endpoint) === path) return { path, agent: name }
    return undefined
  }

  const main: EndpointRef = { path: PLATFORM_PATH }
  http.mount(PLATFORM_PATH, () => main, bodyLimit)
  ws.mount(PLATFORM_PATH, () => main, bodyLimit)
  http.mount(AGENT_PATTERN, (ctx: Context) => agentAt(ctx.params.name), bodyLimit)
  ws.mount(AGENT_PATTERN, (_path, param) => agentAt(param(0)), bodyLimit)

  const mounted = new Set<string>([PLATFORM_PATH])
  function mountCustomAgentPaths(): void {
    for (const a of platform.plugins.agents()) {
      const p = customPath(a.endpoint)
      if (p === undefined || mounted.has(p) || p.includes('{') || p.startsWith('/platform/agent/')) continue
      mounted.add(p)
      http.mount(p, (ctx) => agentByPath(ctx.path), bodyLimit)
      ws.mount(p, (path) => agentByPath(path), bodyLimit)
    }
  }
  mountCustomAgentPaths()
  server.agentEndpoint = (name) => {
    const endpoint = agents().get(name)
    if (endpoint === undefined) return undefined
    const custom = customPath(endpoint)
    return custom === undefined ? `/platform/agent/${name}/mcp` : mounted.has(custom) ? custom : undefined
  }
  // provided last: provide freezes the server, and agentEndpoint is set just above
  platform.provide(MCP, server)
  return server
}

/** The MCP server on `/platform/mcp` and the agents' endpoints; switched off by `platform.mcp.enabled`. */
export const mcpArea: Area = {
  name: 'mcp',
  dependsOn: [],
  configKeys: MCP_CONFIG_KEYS,
  errors: MCP_ERRORS,
  install: async (p) => {
    await installMcp(p)
  }
}

/** OAuth resource server, JWT principals, client tools and tracing around the installed MCP server. */
export const mcpExtrasArea: Area = { name: 'mcp-extras', dependsOn: ['mcp'], install: installMcpExtras }
