import { describe, type AiRuntime, type AiRuntimeInfo } from './runtime.js'

/**
 * The runtimes the platform knows (built-in and plugin-contributed) and which one is active:
 * the configured name, or with `auto` the highest-priority available one (ties: first registered).
 */
export class RuntimeRegistry {
  private readonly runtimes: AiRuntime[] = []

  constructor(
    private readonly configured: string = 'demo',
    private readonly dynamic: () => AiRuntime[] = () => []
  ) {}

  add(r: AiRuntime): void {
    if (this.all().some((x) => x.name === r.name)) throw new Error(`AI runtime '${r.name}' is already registered`)
    this.runtimes.push(r)
  }

  all(): AiRuntime[] {
    return [...this.runtimes, ...this.dynamic().filter((d) => !this.runtimes.some((r) => r.name === d.name))]
  }

  /** As `all().find(...)` (a built-in before a plugin runtime of its name), without building the list: once a turn. */
  get(name: string): AiRuntime | undefined {
    for (const r of this.runtimes) if (r.name === name) return r
    const plugins = this.dynamic()
    for (let i = 0; i < plugins.length; i++) if (plugins[i]!.name === name) return plugins[i]
    return undefined
  }

  list(): AiRuntimeInfo[] {
    return this.all().map(describe)
  }

  /** The active runtime, or undefined when the configured one is missing or none is available. */
  active(): AiRuntime | undefined {
    if (this.configured !== 'auto' && this.configured !== '') return this.get(this.configured)
    let best: AiRuntime | undefined
    for (const r of this.all()) {
      if (!describe(r).isAvailable) continue
      if (best === undefined || r.priority > best.priority) best = r
    }
    return best
  }
}
