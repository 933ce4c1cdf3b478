/**
 * The tools the default loop offers an agent's model: the agent's own (what its MCP endpoint
 * serves), then the tools of the platform endpoint `/platform/mcp` or of another MCP server
 * (`<server>.<tool>`) that the operator lists for it in `platform.ai.agent-tools`.
 * Read at every turn, since tools come and go with hot reload.
 */
import type { Platform } from '../platform.js'
import { getMcp } from '../mcp/index.js'

type View = ReturnType<NonNullable<ReturnType<typeof getMcp>>['registry']['view']>
export type OfferedTool = View['tools'][number]

export interface OfferedTools {
  tools: OfferedTool[]
  byName: Map<string, OfferedTool>
}

const NONE: OfferedTools = { tools: [], byName: new Map() }

export class AgentTools {
  /** `agent\0tool` pairs already warned about, so a missing tool is logged once, not every turn. */
  private readonly warned = new Set<string>()
  private served: View | undefined
  private live = new Map<string, OfferedTool>()

  constructor(
    private readonly platform: Platform,
    private readonly lists: Readonly<Record<string, readonly string[]>>
  ) {}

  /** Logs the listed agents no loaded plugin contributes: a typo would otherwise do nothing, silently. */
  warnUnknownAgents(): void {
    const known = new Set(this.platform.plugins.agents().map((a) => a.name))
    for (const agent of Object.keys(this.lists))
      if (!known.has(agent))
        this.platform.logger.warn(
          { agent, known: [...known] },
          `platform.ai.agent-tools lists tools for agent '${agent}', which no loaded plugin contributes (yet)`
        )
  }

  /** What the model of `agent` is offered; the agent's own tool wins a name clash. */
  of(agent: string): OfferedTools {
    const registry = getMcp(this.platform)?.registry
    if (registry === undefined) return NONE
    const own = registry.view(agent)
    const listed = this.lists[agent] ?? []
    if (listed.length === 0) return { tools: own.tools, byName: own.toolsByName }
    const tools = [...own.tools]
    const byName = new Map(own.toolsByName)
    const served = this.liveTools(registry.view(undefined))
    for (const name of listed) {
      if (byName.has(name)) continue
      // a tool of another MCP server is offered whether or not /platform/mcp exposes it
      const tool = served.get(name) ?? registry.externalTool(name)
      const key = `${agent}\0${name}`
      if (tool === undefined) {
        if (!this.warned.has(key)) {
          this.warned.add(key)
          this.platform.logger.warn(
            { agent, tool: name },
            `platform.ai.agent-tools lists tool '${name}' for agent '${agent}', but neither /platform/mcp nor a connected MCP server serves a tool of that name; its turns go on without it`
          )
        }
        continue
      }
      // back again: a later disappearance is worth a new warning
      this.warned.delete(key)
      tools.push(tool)
      byName.set(name, tool)
    }
    return { tools, byName }
  }

  /** The listed tools of the platform view; a down plugin's tools (callable only to say why) are left out. */
  private liveTools(view: View): Map<string, OfferedTool> {
    if (view !== this.served) {
      this.served = view
      this.live = new Map(view.tools.map((t) => [t.name, t]))
    }
    return this.live
  }
}
