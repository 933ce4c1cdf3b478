import type { ValidateFunction } from 'ajv/dist/2020.js'
import type { Database } from 'lmdb'
import type {
  PluginRegistry,
  RegisteredTool,
  RegisteredResource,
  RegisteredPrompt,
  ToolDescriptor
} from '../plugins/index.js'
import { compileValidator, headerParams, normalizeInputSchema, schemaFromParams, INJECTABLE_TYPES } from './schema.js'
import type { JsonObject } from './types.js'
import type { EndpointView, InvokeContext, PromptEntry, ResourceEntry, ToolEntry } from './entries.js'
import type { HandlerContext, PromptRegistration, ResourceRegistration, ToolRegistration } from './registrations.js'

const MCP_KEY = '_mcp'

/** A tool of another MCP server, named `<server>.<tool>`, as the registry takes it. */
export interface ExternalTool {
  name: string
  title?: string
  description: string
  inputSchema: JsonObject
  call: (args: JsonObject, ctx: InvokeContext) => Promise<unknown>
}

/** What one other MCP server contributes; resources and prompts only when it is exposed. */
export interface ExternalContribution {
  server: string
  /** Also served on /platform/mcp (the gateway); otherwise only agents that list them get the tools. */
  expose: boolean
  tools: ExternalTool[]
  resources: ResourceEntry[]
  prompts: PromptEntry[]
}

interface ExternalSet {
  expose: boolean
  tools: ToolEntry[]
  resources: ResourceEntry[]
  prompts: PromptEntry[]
}

function templateRegex(template: string): RegExp {
  return new RegExp(
    '^' +
      template
        .split(/\{[^}]+\}/)
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('([^/]+)') +
      '$'
  )
}

/** Arguments as a plugin's tool or prompt sees them: on an input-required retry, `_mcp` carries the gathered input. */
function pluginArgs(args: JsonObject, ctx: InvokeContext): JsonObject {
  if (ctx.inputResponses === undefined && ctx.requestState === undefined) return args
  return { ...args, [MCP_KEY]: { inputResponses: ctx.inputResponses ?? {}, requestState: ctx.requestState } }
}

/**
 * The one registry MCP serves: plugin contributions plus programmatic registrations, both kinds
 * side by side. Views are built once per change (validators compiled once per tool, not per call)
 * and cached per endpoint until the plugins or the registrations change.
 */
export class McpRegistry {
  private readonly tools: ToolRegistration[] = []
  private readonly resources: ResourceRegistration[] = []
  private readonly prompts: PromptRegistration[] = []
  private readonly views = new Map<string, EndpointView>()
  private readonly validators = new Map<string, ValidateFunction>()
  private readonly listeners: (() => void)[] = []
  /** Other MCP servers' contributions by server name (see setExternal). */
  private readonly external = new Map<string, ExternalSet>()
  private externalByName: Map<string, ToolEntry> | undefined

  /** What each plugin's tools were when last seen live (JSON), to skip rewriting unchanged ones. */
  private readonly written = new Map<string, string>()
  /** How many contributed tools the cached views hold: one added since (before listen) rebuilds them. */
  private contributedSeen = 0

  /**
   * `known`: the tools each plugin served when last live, kept across restarts (see downTools).
   * `contributed`: the tools other areas add at the MCP_TOOLS extension point, read at use time.
   */
  constructor(
    private readonly plugins: PluginRegistry,
    private readonly handlerCtx: (ctx: InvokeContext) => HandlerContext,
    private readonly known?: Database<ToolDescriptor[], string>,
    private readonly contributed: () => readonly ToolRegistration[] = () => []
  ) {}

  onChange(fn: () => void): void {
    this.listeners.push(fn)
  }

  /** Drops cached views; called on PluginsChanged and on every programmatic (un)registration. */
  invalidate(): void {
    this.views.clear()
    for (const fn of this.listeners) {
      try {
        fn()
      } catch {
        /* a listener must not break registration */
      }
    }
  }

  registerTool(reg: ToolRegistration): () => void {
    return this.add(this.tools, reg)
  }
  registerResource(reg: ResourceRegistration): () => void {
    return this.add(this.resources, reg)
  }
  registerPrompt(reg: PromptRegistration): () => void {
    return this.add(this.prompts, reg)
  }

  private add<T>(list: T[], reg: T): () => void {
    list.push(reg)
    this.invalidate()
    return () => {
      const i = list.indexOf(reg)
      if (i >= 0) {
        list.splice(i, 1)
        this.invalidate()
      }
    }
  }

  /**
   * Sets (or with an empty contribution, clears) what another MCP server contributes. A tool
   * whose name a plugin or a registration on /platform/mcp already serves is refused, as a
   * plugin's clashing contribution is; the refusals are returned, one line each.
   */
  setExternal(c: ExternalContribution): string[] {
    const refused: string[] = []
    const taken = new Map<string, string>()
    for (const t of this.plugins.tools()) taken.set(t.name, `plugin '${t.plugin}'`)
    for (const r of this.tools)
      if (r.agent === undefined && !taken.has(r.name)) taken.set(r.name, 'a registration in code')
    const tools: ToolEntry[] = []
    for (const t of c.tools) {
      const owner = taken.get(t.name)
      if (owner !== undefined) {
        refused.push(`tool '${t.name}' (already served by ${owner})`)
        continue
      }
      const inputSchema = normalizeInputSchema(t.inputSchema)
      const e: ToolEntry = {
        name: t.name,
        description: t.description,
        inputSchema,
        taskSupport: 'forbidden',
        validate: this.validator(`x\0${t.name}\0${JSON.stringify(inputSchema)}`, inputSchema),
        headerParams: headerParams(inputSchema),
        invoke: t.call,
        server: c.server
      }
      if (t.title !== undefined) e.title = t.title
      tools.push(e)
    }
    if (tools.length === 0 && c.resources.length === 0 && c.prompts.length === 0) this.external.delete(c.server)
    else this.external.set(c.server, { expose: c.expose, tools, resources: c.resources, prompts: c.prompts })
    this.externalByName = undefined
    this.invalidate()
    return refused
  }

  /** A tool of another MCP server by its full name, exposed or not: what an agent may be given. */
  externalTool(name: string): ToolEntry | undefined {
    if (this.externalByName === undefined) {
      this.externalByName = new Map()
      for (const set of this.external.values()) for (const t of set.tools) this.externalByName.set(t.name, t)
    }
    return this.externalByName.get(name)
  }

  /** What an endpoint serves: `agent` undefined → non-agent plugins and platform registrations. */
  view(agent: string | undefined): EndpointView {
    const added = this.contributed().length
    if (added !== this.contributedSeen) {
      this.contributedSeen = added
      this.invalidate()
    }
    const key = agent ?? ''
    let v = this.views.get(key)
    if (v === undefined) {
      v = this.build(agent)
      this.views.set(key, v)
    }
    return v
  }

  private validator(key: string, schema: JsonObject): ValidateFunction {
    let v = this.validators.get(key)
    if (v === undefined) {
      v = compileValidator(schema)
      this.validators.set(key, v)
    }
    return v
  }

  private build(agent: string | undefined): EndpointView {
    const tools: ToolEntry[] = []
    const pluginTools: RegisteredTool[] =
      agent === undefined ? this.plugins.tools() : (this.plugins.agents().find((a) => a.name === agent)?.tools ?? [])
    for (const t of pluginTools) tools.push(this.pluginTool(t))
    for (const r of this.contributed()) if (r.agent === agent) tools.push(this.programmaticTool(r))
    for (const r of this.tools) if (r.agent === agent) tools.push(this.programmaticTool(r))
    const resources: ResourceEntry[] = []
    if (agent === undefined) for (const r of this.plugins.resources()) resources.push(pluginResource(r))
    for (const r of this.resources) if (r.agent === agent) resources.push(this.programmaticResource(r))
    const prompts: PromptEntry[] = []
    if (agent === undefined) for (const p of this.plugins.prompts()) prompts.push(pluginPrompt(p))
    for (const p of this.prompts) if (p.agent === agent) prompts.push(this.programmaticPrompt(p))
    // the gateway: exposed servers' contributions after everything of our own, so a clash never shadows ours
    if (agent === undefined)
      for (const set of this.external.values())
        if (set.expose) {
          tools.push(...set.tools)
          resources.push(...set.resources)
          prompts.push(...set.prompts)
        }
    const toolsByName = new Map<string, ToolEntry>()
    for (const t of tools) if (!toolsByName.has(t.name)) toolsByName.set(t.name, t)
    const listed = [...toolsByName.values()]
    // callable but not listed: a call fails with a tool error naming the plugin and why it is down
    if (agent === undefined) {
      this.remember(pluginTools)
      for (const t of this.downTools()) if (!toolsByName.has(t.name)) toolsByName.set(t.name, this.pluginTool(t))
    }
    const promptsByName = new Map<string, PromptEntry>()
    for (const p of prompts) if (!promptsByName.has(p.name)) promptsByName.set(p.name, p)
    return {
      tools: listed,
      toolsByName,
      resources: resources.filter((r) => !r.template),
      templates: resources.filter((r) => r.template),
      prompts: [...promptsByName.values()],
      promptsByName
    }
  }

  /**
   * Keeps the tools of live plugins, so after a restart a plugin that no longer loads
   * still has its tools answer why.
   */
  private remember(tools: RegisteredTool[]): void {
    if (this.known === undefined) return
    const byPlugin = new Map<string, ToolDescriptor[]>()
    for (const { plugin, agent: _agent, call: _call, ...d } of tools) {
      let list = byPlugin.get(plugin)
      if (list === undefined) byPlugin.set(plugin, (list = []))
      list.push(d)
    }
    for (const [plugin, descs] of byPlugin) {
      const json = JSON.stringify(descs)
      if (this.written.get(plugin) === json) continue
      this.written.set(plugin, json)
      void this.known.put(plugin, descs)
    }
  }

  /** Tools of plugins that are down: those they served earlier in this process, else when last live (LMDB). */
  private downTools(): RegisteredTool[] {
    const out = [...this.plugins.strandedTools()]
    if (this.known === undefined) return out
    const have = new Set(out.map((t) => t.plugin))
    for (const s of this.plugins.status()) {
      if (s.state === 'live' || have.has(s.name)) continue
      const plugin = s.name
      for (const d of this.known.get(plugin) ?? [])
        out.push({
          ...d,
          plugin,
          call: async (args, opts) => await this.plugins.invoke(plugin, 'tool', d.name, args, opts)
        })
    }
    return out
  }

  private pluginTool(t: RegisteredTool): ToolEntry {
    const inputSchema = normalizeInputSchema(t.input)
    const json = JSON.stringify(inputSchema)
    const ts = t.taskSupport
    const e: ToolEntry = {
      name: t.name,
      description: t.description,
      inputSchema,
      taskSupport: ts === 'required' ? 'required' : t.longRunning ? 'optional' : 'forbidden',
      validate: this.validator(`p\0${t.plugin}\0${t.agent ?? ''}\0${t.name}\0${json}`, inputSchema),
      headerParams: headerParams(inputSchema),
      invoke: (args, ctx) => t.call(pluginArgs(args, ctx), { signal: ctx.signal, onProgress: ctx.progress })
    }
    if (t.title !== undefined) e.title = t.title
    if (t.uiResource !== undefined && t.uiResource !== '') e.uiResource = t.uiResource
    if (t.iconUrl !== undefined && t.iconUrl !== '') e.iconUrl = t.iconUrl
    return e
  }

  private programmaticTool(r: ToolRegistration): ToolEntry {
    const inputSchema =
      r.inputSchema !== undefined ? normalizeInputSchema(r.inputSchema) : schemaFromParams(r.params ?? [])
    const injected = (r.params ?? []).filter((p) => p.type !== undefined && INJECTABLE_TYPES.has(p.type))
    const e: ToolEntry = {
      name: r.name,
      description: r.description ?? '',
      inputSchema,
      taskSupport: r.taskSupport ?? (r.longRunning === true ? 'optional' : 'forbidden'),
      validate: this.validator(`r\0${r.agent ?? ''}\0${r.name}\0${JSON.stringify(inputSchema)}`, inputSchema),
      headerParams: headerParams(inputSchema),
      invoke: async (args, ctx) => {
        const hctx = this.handlerCtx(ctx)
        if (injected.length === 0) return await r.handler(args, hctx)
        const full: JsonObject = { ...args }
        for (const p of injected) {
          if (p.type === 'config') full[p.name] = hctx.config
          else if (p.type === 'logger') full[p.name] = hctx.logger
          else full[p.name] = hctx.broadcaster(typeof args.topic === 'string' ? args.topic : p.name)
        }
        return await r.handler(full, hctx)
      }
    }
    if (r.title !== undefined) e.title = r.title
    if (r.uiResource !== undefined) e.uiResource = r.uiResource
    if (r.iconUrl !== undefined) e.iconUrl = r.iconUrl
    return e
  }

  private programmaticResource(r: ResourceRegistration): ResourceEntry {
    const template = r.uri.includes('{')
    const e: ResourceEntry = {
      uri: r.uri,
      name: r.name ?? r.uri,
      description: r.description ?? '',
      mimeType: r.mimeType ?? 'text/plain',
      template,
      read: async (uri, ctx) => await r.handler(uri, this.handlerCtx(ctx))
    }
    if (template) e.match = templateRegex(r.uri)
    if (r.title !== undefined) e.title = r.title
    return e
  }

  private programmaticPrompt(p: PromptRegistration): PromptEntry {
    const e: PromptEntry = {
      name: p.name,
      description: p.description ?? '',
      arguments: (p.params ?? []).map((a) => ({
        name: a.name,
        ...(a.description !== undefined ? { description: a.description } : {}),
        required: a.required !== false
      })),
      get: async (args, ctx) => await p.handler(args, this.handlerCtx(ctx))
    }
    if (p.title !== undefined) e.title = p.title
    if (p.complete !== undefined) e.complete = p.complete
    return e
  }
}

function pluginResource(r: RegisteredResource): ResourceEntry {
  const template = r.uri.includes('{')
  const e: ResourceEntry = {
    uri: r.uri,
    name: r.name !== '' ? r.name : r.uri,
    description: r.description,
    mimeType: r.mimeType,
    template,
    read: async (uri, ctx) => await r.read(uri, { signal: ctx.signal, onProgress: ctx.progress })
  }
  if (template) e.match = templateRegex(r.uri)
  return e
}

function pluginPrompt(p: RegisteredPrompt): PromptEntry {
  return {
    name: p.name,
    description: p.description,
    arguments: p.arguments,
    get: async (args, ctx) =>
      await p.get(pluginArgs(args, ctx) as Record<string, string>, { signal: ctx.signal, onProgress: ctx.progress })
  }
}
