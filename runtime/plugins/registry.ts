import type { EventBus } from '../events/index.js'
import type { SandboxInstance, Manifest, InvokeOptions, ToolDescriptor, PluginDescriptor } from './contract.js'
import type { PlatformError } from '../contracts/index.js'
import { pluginCallError } from './contract.js'
import type {
  RegisteredAgent,
  RegisteredClassifier,
  RegisteredEmbedder,
  RegisteredPolicyType,
  RegisteredPrompt,
  RegisteredResource,
  RegisteredRuntime,
  RegisteredTool
} from './registered.js'
import { KIND_LABEL, NONE, contributionNames, type PluginState, type PluginStatus } from './plugin-status.js'
import { AgentTurns } from './agent-turns.js'
import { RuntimeStreams } from './runtime-streams.js'

interface Live {
  manifest: Manifest
  dir: string
  instance: SandboxInstance
  inFlight: number
  retired: boolean
}

/**
 * What every loaded plugin contributes, read by MCP (tools, resources, prompts, agents),
 * governance (policy types) and scope (classifiers, embedders). Swapping a plugin keeps calls in
 * flight on the old instance and disposes it when they finish. Changes are announced on the bus
 * (`PluginsChanged`).
 */
export class PluginRegistry {
  private readonly live = new Map<string, Live>()
  private readonly failed = new Map<string, PluginStatus>()
  /** The tools a plugin served before it went down, so a client calling one learns why it is gone. */
  private readonly stranded = new Map<string, ToolDescriptor[]>()
  /** Views built once per change: MCP reads them on every request. Shared and frozen: never mutate. */
  private readonly views = new Map<string, readonly unknown[]>()
  /** Turns of agents running their own `run()`, which the sandboxes call back into. */
  readonly agentTurns = new AgentTurns()
  /** Plugin runtime streams in flight, whose sandboxes pull for more events. */
  readonly runtimeStreams = new RuntimeStreams()

  constructor(private readonly bus: EventBus) {}

  private view<T>(key: string, build: () => T[]): T[] {
    let v = this.views.get(key)
    if (v === undefined) {
      v = Object.freeze(build())
      this.views.set(key, v)
    }
    return v as T[]
  }

  /** Installs (or swaps in) a loaded plugin. */
  set(dir: string, manifest: Manifest, instance: SandboxInstance): void {
    const old = this.live.get(manifest.name)
    const had = old !== undefined || this.failed.has(manifest.name)
    this.failed.delete(manifest.name)
    this.stranded.delete(manifest.name)
    this.live.set(manifest.name, { manifest, dir, instance, inFlight: 0, retired: false })
    this.views.clear()
    if (old !== undefined) this.retire(old)
    this.bus.emit('PluginsChanged', {
      added: had ? [] : [manifest.name],
      changed: had ? [manifest.name] : [],
      removed: []
    })
  }

  /** Records a plugin that failed to load; it contributes nothing and affects nothing else. */
  setFailed(name: string, dir: string, error: string, manifest?: Partial<Manifest>): void {
    this.setDown(name, dir, 'failed', error, manifest)
  }

  /** Records a plugin the operator disabled (`platform.plugins.<name>.enabled: false`). */
  setDisabled(name: string, dir: string, manifest?: Partial<Manifest>): void {
    this.setDown(name, dir, 'disabled', `disabled by the operator (platform.plugins.${name}.enabled: false)`, manifest)
  }

  private setDown(name: string, dir: string, state: PluginState, error: string, manifest?: Partial<Manifest>): void {
    const old = this.live.get(name)
    if (old !== undefined) {
      this.live.delete(name)
      this.stranded.set(name, old.instance.descriptor.tools)
      this.retire(old)
    }
    this.views.clear()
    this.failed.set(name, {
      name,
      dir,
      state,
      error,
      contributes: NONE,
      ...(manifest?.version !== undefined ? { version: manifest.version } : {}),
      ...(manifest?.sandbox !== undefined ? { sandbox: manifest.sandbox } : {})
    })
    this.bus.emit('PluginsChanged', { added: [], changed: old !== undefined ? [name] : [], removed: [] })
  }

  remove(name: string): void {
    const old = this.live.get(name)
    const wasFailed = this.failed.delete(name)
    if (this.stranded.delete(name)) this.views.clear()
    if (old !== undefined) {
      this.live.delete(name)
      this.views.clear()
      this.retire(old)
    }
    if (old !== undefined || wasFailed) this.bus.emit('PluginsChanged', { added: [], changed: [], removed: [name] })
  }

  has(name: string): boolean {
    return this.live.has(name)
  }

  /**
   * What `descriptor` would serve under a name another live plugin already serves (tools,
   * resources, prompts, agents, policy types, classifiers, embedders share one namespace per
   * kind), as `tool 'x' (already served by plugin 'a')`; empty when nothing clashes. A plugin
   * never clashes with its own previous version.
   */
  clashes(plugin: string, descriptor: PluginDescriptor): string[] {
    const out: string[] = []
    for (const [other, l] of this.live) {
      if (other === plugin) continue
      for (const [kind, names] of Object.entries(contributionNames(descriptor))) {
        const taken = new Set(contributionNames(l.instance.descriptor)[kind as keyof typeof KIND_LABEL])
        for (const n of names)
          if (taken.has(n))
            out.push(`${KIND_LABEL[kind as keyof typeof KIND_LABEL]} '${n}' (already served by plugin '${other}')`)
      }
    }
    return out
  }

  status(): PluginStatus[] {
    const out: PluginStatus[] = []
    for (const [name, l] of this.live) {
      const d = l.instance.descriptor
      out.push({
        name,
        dir: l.dir,
        version: l.manifest.version,
        sandbox: l.instance.kind,
        state: 'live',
        contributes: contributionNames(d)
      })
    }
    out.push(...this.failed.values())
    return out.sort((a, b) => a.name.localeCompare(b.name))
  }

  // --- views ---

  /** Tools of plugins that are not agents: served on `/platform/mcp`. */
  tools(): RegisteredTool[] {
    return this.view('tools', () => {
      const out: RegisteredTool[] = []
      for (const [plugin, l] of this.live)
        for (const t of l.instance.descriptor.tools)
          out.push({ ...t, plugin, call: (args, opts) => this.invoke(plugin, 'tool', t.name, args, opts) })
      return out
    })
  }

  /**
   * Tools of plugins that were live and then failed or were disabled:
   * not listed, but a call fails naming the cause.
   */
  strandedTools(): RegisteredTool[] {
    return this.view('stranded', () => {
      const out: RegisteredTool[] = []
      for (const [plugin, tools] of this.stranded)
        if (this.failed.has(plugin))
          for (const t of tools)
            out.push({ ...t, plugin, call: (args, opts) => this.invoke(plugin, 'tool', t.name, args, opts) })
      return out
    })
  }

  agents(): RegisteredAgent[] {
    return this.view('agents', () => {
      const out: RegisteredAgent[] = []
      for (const [plugin, l] of this.live) {
        for (const a of l.instance.descriptor.agents) {
          out.push({
            ...a,
            plugin,
            tools: a.tools.map((t) => ({
              ...t,
              plugin,
              agent: a.name,
              call: (args: unknown, opts?: InvokeOptions) =>
                this.invoke(plugin, 'tool', `${a.name}/${t.name}`, args, opts)
            })),
            ...(a.hasRun === true
              ? {
                  run: (turn: unknown, opts?: InvokeOptions, turnId?: string) =>
                    this.invoke(plugin, 'agent', a.name, turnId !== undefined ? { turn, turnId } : { turn }, opts)
                }
              : {})
          })
        }
      }
      return out
    })
  }

  resources(): RegisteredResource[] {
    return this.view('resources', () => {
      const out: RegisteredResource[] = []
      for (const [plugin, l] of this.live)
        for (const r of l.instance.descriptor.resources)
          out.push({ ...r, plugin, read: (uri, opts) => this.invoke(plugin, 'resource', uri, { uri }, opts) })
      return out
    })
  }

  prompts(): RegisteredPrompt[] {
    return this.view('prompts', () => {
      const out: RegisteredPrompt[] = []
      for (const [plugin, l] of this.live)
        for (const p of l.instance.descriptor.prompts)
          out.push({ ...p, plugin, get: (args, opts) => this.invoke(plugin, 'prompt', p.name, args, opts) })
      return out
    })
  }

  policyTypes(): RegisteredPolicyType[] {
    return this.view('policyTypes', () => {
      const out: RegisteredPolicyType[] = []
      for (const [plugin, l] of this.live)
        for (const p of l.instance.descriptor.policyTypes)
          out.push({
            ...p,
            plugin,
            evaluate: (context, config, opts) => this.invoke(plugin, 'policyType', p.type, { context, config }, opts)
          })
      return out
    })
  }

  classifiers(): RegisteredClassifier[] {
    return this.view('classifiers', () => {
      const out: RegisteredClassifier[] = []
      for (const [plugin, l] of this.live)
        for (const c of l.instance.descriptor.classifiers)
          out.push({
            ...c,
            plugin,
            classify: (request, scope, opts) => this.invoke(plugin, 'classifier', c.name, { request, scope }, opts)
          })
      return out
    })
  }

  embedders(): RegisteredEmbedder[] {
    return this.view('embedders', () => {
      const out: RegisteredEmbedder[] = []
      for (const [plugin, l] of this.live)
        for (const e of l.instance.descriptor.embedders)
          out.push({
            ...e,
            plugin,
            embed: async (texts, opts) => (await this.invoke(plugin, 'embedder', e.name, { texts }, opts)) as number[][]
          })
      return out
    })
  }

  runtimes(): RegisteredRuntime[] {
    return this.view('runtimes', () => {
      const out: RegisteredRuntime[] = []
      for (const [plugin, l] of this.live)
        for (const r of l.instance.descriptor.runtimes ?? [])
          out.push({
            ...r,
            plugin,
            stream: (request, opts) =>
              this.runtimeStreams.begin(
                plugin,
                (stream, o) => this.invoke(plugin, 'runtime', r.name, { request, stream }, o),
                opts?.signal
              )
          })
      return out
    })
  }

  /** Runs on the instance live at call time; a swap meanwhile lets this call finish on it. */
  async invoke(
    plugin: string,
    kind: 'tool' | 'resource' | 'prompt' | 'agent' | 'policyType' | 'classifier' | 'embedder' | 'runtime',
    name: string,
    args: unknown,
    opts?: InvokeOptions
  ): Promise<unknown> {
    const l = this.live.get(plugin)
    if (l === undefined) throw this.unavailable(plugin)
    l.inFlight++
    try {
      return await l.instance.invoke({ kind, name, args }, opts)
    } finally {
      if (--l.inFlight === 0 && l.retired) void l.instance.dispose().catch(() => {})
    }
  }

  async closeAll(): Promise<void> {
    const all = [...this.live.values()]
    this.live.clear()
    this.views.clear()
    await Promise.allSettled(all.map((l) => l.instance.dispose()))
  }

  private unavailable(plugin: string): PlatformError {
    const down = this.failed.get(plugin)
    const why =
      down === undefined
        ? 'is not loaded'
        : down.state === 'disabled'
          ? `is ${down.error ?? 'disabled'}`
          : `failed to load: ${down.error ?? 'unknown error'}`
    return pluginCallError(plugin, 'unavailable', `plugin '${plugin}' ${why}`)
  }

  private retire(l: Live): void {
    l.retired = true
    if (l.inFlight === 0) void l.instance.dispose().catch(() => {})
  }
}
