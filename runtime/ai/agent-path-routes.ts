/**
 * Serving one protocol endpoint at every agent's path (`{chat path}/{suffix}`), for the endpoints
 * that each agent has one of (A2A, AG-UI). A pattern route the endpoint registers itself answers
 * the paths under `/platform/agent/{name}/`; an agent whose `endpoint` names its own path gets its
 * routes mounted there as it appears (plugins load and reload), and `pathOf` answers only what is
 * served. The endpoint keeps its own handlers; this holds which agent a path belongs to.
 */
import type { Platform } from '../platform.js'
import type { RegisteredAgent } from '../plugins/index.js'
import { AGENT_BASE, agentChatPath } from './agent-paths.js'

export interface AgentPathRoutesOptions {
  /** The path segment after the agent's chat path: `a2a`, `agui`. */
  suffix: string
  /** The protocol's name in logs: `A2A`, `AG-UI`. */
  label: string
}

export class AgentPathRoutes {
  // endpoint path -> agent, rebuilt when plugins change so a request never walks the registry
  private index: Map<string, RegisteredAgent> | undefined
  private readonly mounted = new Set<string>()
  private readonly underPattern: RegExp

  constructor(
    private readonly platform: Platform,
    private readonly o: AgentPathRoutesOptions
  ) {
    this.underPattern = new RegExp(`^${AGENT_BASE}/[^/]+/${o.suffix}$`)
  }

  /** Where an agent's endpoint would be: under its chat path. */
  pathFor(agent: { name: string; endpoint?: string }): string {
    return `${agentChatPath(agent)}/${this.o.suffix}`
  }

  /** The agent whose endpoint is at `path`, if one is. */
  agentAt(path: string): RegisteredAgent | undefined {
    return this.agents().get(path)
  }

  /** Every agent by its endpoint path. */
  agents(): ReadonlyMap<string, RegisteredAgent> {
    this.index ??= new Map(this.platform.plugins.agents().map((a) => [this.pathFor(a), a]))
    return this.index
  }

  /** Where the agent's endpoint is served, or undefined when it is not (a path taken or not plain). */
  pathOf(agent: RegisteredAgent): string | undefined {
    const p = this.pathFor(agent)
    return this.agentAt(p)?.name === agent.name && (this.underPattern.test(p) || this.mounted.has(p)) ? p : undefined
  }

  /**
   * Mounts the routes of every agent whose path the pattern route does not answer, now and whenever
   * plugins change; `mount` registers them for one plain path and throws when a route is taken.
   */
  serveCustomPaths(mount: (path: string) => void): void {
    const mountAll = (): void => {
      const { logger } = this.platform
      const { label } = this.o
      for (const a of this.platform.plugins.agents()) {
        const p = this.pathFor(a)
        if (this.underPattern.test(p) || this.mounted.has(p)) continue
        if (/[{}:*?#]/.test(p)) {
          logger.warn(
            { agent: a.name, path: p },
            `agent '${a.name}': ${label} path ${p} is not a plain path; not served`
          )
          continue
        }
        try {
          mount(p)
          this.mounted.add(p)
        } catch (err) {
          logger.warn({ err, agent: a.name, path: p }, `agent '${a.name}': ${label} path ${p} is taken; not served`)
        }
      }
    }
    mountAll()
    this.platform.bus.on('PluginsChanged', () => {
      this.index = undefined
      mountAll()
    })
  }
}
