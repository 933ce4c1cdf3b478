/**
 * The coordinators the loaded plugins declare (agents with a `fleet`), rebuilt whenever the plugin
 * registry's agents change (hot reload). A coordinator in a fleet cycle, or whose fleet its
 * descriptor got wrong, is unavailable: its dispatches fail with that text, logged once.
 */
import type { Logger } from '../observability/index.js'
import type { AgentRefDescriptor, PluginRegistry, RegisteredAgent } from '../plugins/index.js'

export interface Coordinator {
  name: string
  version: string
  plugin: string
  refs: AgentRefDescriptor[]
  byName: Map<string, AgentRefDescriptor>
  /**
   * Why it cannot dispatch: `Circular fleet dependency: a -> b -> a` when it is on a cycle, or
   * what is wrong with its fleet; undefined while it can.
   */
  unavailable?: string
}

interface Snapshot {
  agents: Map<string, RegisteredAgent>
  coordinators: Map<string, Coordinator>
}

const FIELDS: Record<Exclude<keyof AgentRefDescriptor, 'name'>, (v: unknown) => boolean> = {
  version: (v) => typeof v === 'string',
  required: (v) => typeof v === 'boolean',
  weight: (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0,
  maxRetries: (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 10,
  circuitBreaker: (v) => typeof v === 'boolean',
  timeoutMs: (v) => Number.isInteger(v) && (v as number) >= 0,
  maxTurns: (v) => Number.isInteger(v) && (v as number) >= 0
}

/**
 * A descriptor's fleet checked again on the host (an isolate's descriptor is the plugin's word):
 * the refs, or the reason they are refused.
 */
export function checkRefs(coordinator: string, raw: unknown): AgentRefDescriptor[] | string {
  if (!Array.isArray(raw) || raw.length === 0) return `coordinator '${coordinator}': 'fleet' must be a non-empty array`
  const seen = new Set<string>()
  const out: AgentRefDescriptor[] = []
  for (const [i, r] of raw.entries()) {
    if (r === null || typeof r !== 'object') return `coordinator '${coordinator}': fleet[${i}] must be an object`
    const ref = r as Record<string, unknown>
    if (typeof ref.name !== 'string' || ref.name === '')
      return `coordinator '${coordinator}': fleet[${i}].name must be a non-empty string`
    for (const [k, ok] of Object.entries(FIELDS))
      if (!ok(ref[k])) return `coordinator '${coordinator}': fleet[${i}].${k} is invalid`
    if (seen.has(ref.name)) return `Duplicate agent reference '${ref.name}' in coordinator '${coordinator}'`
    seen.add(ref.name)
    out.push(ref as unknown as AgentRefDescriptor)
  }
  return out
}

/** For each coordinator on a cycle, the cycle's text starting from it. */
function cycles(coordinators: Map<string, Coordinator>): Map<string, string> {
  const out = new Map<string, string>()
  for (const start of coordinators.keys()) {
    // depth-first from `start`, looking for a way back to it through coordinators
    const path: string[] = [start]
    const visited = new Set<string>([start])
    const walk = (at: string): boolean => {
      for (const ref of coordinators.get(at)!.refs) {
        if (ref.name === start) {
          path.push(start)
          return true
        }
        if (visited.has(ref.name) || !coordinators.has(ref.name)) continue
        visited.add(ref.name)
        path.push(ref.name)
        if (walk(ref.name)) return true
        path.pop()
      }
      return false
    }
    if (walk(start)) out.set(start, `Circular fleet dependency: ${path.join(' -> ')}`)
  }
  return out
}

export class FleetRegistry {
  private seen: readonly RegisteredAgent[] | undefined
  private snap: Snapshot = { agents: new Map(), coordinators: new Map() }
  private readonly logged = new Set<string>()

  constructor(
    private readonly plugins: PluginRegistry,
    private readonly logger: Logger
  ) {}

  /** The current view; rebuilt (and new cycles or bad fleets logged) when the plugins changed. */
  private now(): Snapshot {
    const agents = this.plugins.agents()
    if (agents === this.seen) return this.snap
    this.seen = agents
    const byName = new Map<string, RegisteredAgent>()
    const coordinators = new Map<string, Coordinator>()
    for (const a of agents) {
      byName.set(a.name, a)
      if (a.fleet === undefined) continue
      const checked = checkRefs(a.name, a.fleet)
      const refs = typeof checked === 'string' ? [] : checked
      coordinators.set(a.name, {
        name: a.name,
        version: a.version,
        plugin: a.plugin,
        refs,
        byName: new Map(refs.map((r) => [r.name, r])),
        ...(typeof checked === 'string' ? { unavailable: checked } : {})
      })
      if (typeof checked === 'string') this.once(checked, { coordinator: a.name, plugin: a.plugin })
    }
    for (const [name, text] of cycles(coordinators)) {
      coordinators.get(name)!.unavailable = text
      this.once(text, { coordinator: name })
    }
    this.snap = { agents: byName, coordinators }
    return this.snap
  }

  private once(text: string, data: Record<string, unknown>): void {
    if (this.logged.has(text)) return
    this.logged.add(text)
    this.logger.error(data, `${text}: the coordinator is unavailable`)
  }

  /** Re-reads the plugins now (on a plugin change, so a cycle is logged when it appears). */
  refresh(): void {
    this.now()
  }

  coordinator(name: string): Coordinator | undefined {
    return this.now().coordinators.get(name)
  }

  coordinators(): Coordinator[] {
    return [...this.now().coordinators.values()]
  }

  /** The loaded agent of that name, if any. */
  agent(name: string): RegisteredAgent | undefined {
    return this.now().agents.get(name)
  }
}
