/**
 * The other MCP servers of `platform.mcp.servers`: one connection each, their tools kept in the
 * MCP registry as `<server>.<tool>` (so agents and, for an exposed server, /platform/mcp call them
 * on the same path as plugin tools: the tool gate, the decision log, tracing, the turn's audit),
 * and their state for the admin and `/readyz`.
 */
import type { Logger } from '../observability/index.js'
import type { Prompt, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js'
import type { ExternalServerConfig } from './external-config.js'
import type { CallOptions, ExternalServer, ServerState } from './external-server.js'
import type { InvokeContext, PromptEntry, ResourceEntry } from './entries.js'
import type { McpRegistry } from './registry.js'
import type { JsonObject } from './types.js'

/** One server as the admin shows it. */
export interface ExternalServerStatus {
  name: string
  transport: 'http' | 'stdio'
  state: ServerState
  error: string | null
  expose: boolean
  connectedAt: string | null
  tools: { name: string; description: string }[]
  /** Tools refused because a plugin or a registration already serves their name. */
  refused: string[]
}

/** The call's options: its cancellation, and progress only when the caller can be sent it. */
function callOptions(ctx: InvokeContext): CallOptions {
  if (ctx.wantsProgress !== true) return { signal: ctx.signal }
  return {
    signal: ctx.signal,
    onProgress: (p) => {
      ctx.progress(p)
    }
  }
}

/** A URI template as the registry matches it (`{x}` stands for one path segment). */
function templateMatch(template: string): RegExp {
  const parts = template.split(/\{[^}]+\}/).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp('^' + parts.join('([^/]+)') + '$')
}

export class ExternalServers {
  readonly #servers: ExternalServer[]
  readonly #refused = new Map<string, string[]>()

  /**
   * The servers of `configs`, not yet connected. The MCP SDK client is imported only when there is
   * one: its module graph (zod and the SDK, some 200 files) costs every platform start about 0.7 s
   * of CPU, and most platforms configure no other server.
   */
  static async create(
    configs: ExternalServerConfig[],
    registry: McpRegistry,
    logger: Logger
  ): Promise<ExternalServers> {
    const Server = configs.length === 0 ? undefined : (await import('./external-server.js')).ExternalServer
    return new ExternalServers(registry, logger, (publish) =>
      Server === undefined ? [] : configs.map((c) => new Server(c, logger, publish))
    )
  }

  private constructor(
    private readonly registry: McpRegistry,
    private readonly logger: Logger,
    servers: (publish: (s: ExternalServer) => void) => ExternalServer[]
  ) {
    this.#servers = servers((s) => {
      this.publish(s)
    })
  }

  get size(): number {
    return this.#servers.length
  }

  /** Connects every server; resolves once each has had its first attempt (a server down keeps retrying). */
  async start(): Promise<void> {
    await Promise.all(this.#servers.map((s) => s.start()))
  }

  async close(): Promise<void> {
    await Promise.all(this.#servers.map((s) => s.close()))
  }

  /** Whether every server is connected; false is degraded service, not unreadiness. */
  get allConnected(): boolean {
    return this.#servers.every((s) => s.state === 'connected')
  }

  status(): ExternalServerStatus[] {
    return this.#servers.map((s) => ({
      name: s.name,
      transport: s.config.transport.kind,
      state: s.state,
      error: s.error ?? null,
      expose: s.config.expose,
      connectedAt: s.connectedAt === undefined ? null : new Date(s.connectedAt).toISOString(),
      tools: s.listing.tools.map((t) => ({ name: `${s.name}.${t.name}`, description: t.description ?? '' })),
      refused: this.#refused.get(s.name) ?? []
    }))
  }

  /** Hands the registry what `s` lists now; its tools stay while it is down, to answer why. */
  private publish(s: ExternalServer): void {
    const { tools, resources, templates, prompts } = s.listing
    const refused = this.registry.setExternal({
      server: s.name,
      expose: s.config.expose,
      tools: tools.map((t) => ({
        name: `${s.name}.${t.name}`,
        ...(t.title !== undefined ? { title: t.title } : {}),
        description: t.description ?? '',
        inputSchema: t.inputSchema as JsonObject,
        call: (args, ctx) => s.callTool(t.name, args, callOptions(ctx))
      })),
      resources: [...resources, ...templates].map((r) => this.resource(s, r)),
      prompts: prompts.map((p) => this.prompt(s, p))
    })
    const before = this.#refused.get(s.name) ?? []
    if (refused.length > 0 && refused.join('\n') !== before.join('\n'))
      this.logger.error({ server: s.name, refused }, `MCP server '${s.name}': tools refused, their names are taken`)
    this.#refused.set(s.name, refused)
  }

  private resource(s: ExternalServer, r: Resource | ResourceTemplate): ResourceEntry {
    const template = 'uriTemplate' in r
    const uri = template ? r.uriTemplate : r.uri
    const e: ResourceEntry = {
      uri,
      name: r.name,
      description: r.description ?? '',
      mimeType: r.mimeType ?? 'text/plain',
      template,
      read: async (u, ctx) => await s.readResource(u, ctx.signal)
    }
    if (template) e.match = templateMatch(uri)
    if (r.title !== undefined) e.title = r.title
    return e
  }

  private prompt(s: ExternalServer, p: Prompt): PromptEntry {
    const e: PromptEntry = {
      name: `${s.name}.${p.name}`,
      description: p.description ?? '',
      arguments: (p.arguments ?? []).map((a) => ({
        name: a.name,
        ...(a.description !== undefined ? { description: a.description } : {}),
        required: a.required === true
      })),
      get: async (args, ctx) => await s.getPrompt(p.name, args, ctx.signal)
    }
    if (p.title !== undefined) e.title = p.title
    return e
  }
}
