/**
 * The contracts between the plugin host and everything that reads what plugins contribute
 * (MCP, governance, scope, agents). Functions never cross a sandbox boundary: a sandbox loads a
 * plugin, reports a descriptor (plain data), and runs contributions by (kind, name) on request.
 */
import type { CancelSignal } from './cancel.js'
import type { Logger } from 'pino'
import type { Metrics } from '../observability/index.js'

export type SandboxKind = 'isolate' | 'worker' | 'inline'
export type ContributionKind =
  'tool' | 'resource' | 'prompt' | 'agent' | 'policyType' | 'classifier' | 'embedder' | 'runtime'

export interface Manifest {
  name: string
  version: string
  description?: string
  entry: string
  sandbox: SandboxKind
  permissions: { net: string[]; kv: boolean; env: string[] }
  limits: { memoryMb: number; timeoutMs: number; concurrency: number }
}

/** What the operator granted, merged with what the manifest asked: the plugin runs with exactly this. */
export interface EffectiveGrant {
  sandbox: SandboxKind
  permissions: { net: string[]; kv: boolean; env: string[] }
  limits: { memoryMb: number; timeoutMs: number; concurrency: number }
}

// --- descriptors: plain data a sandbox reports after loading ---

export interface ToolDescriptor {
  name: string
  title?: string
  description: string
  iconUrl?: string
  input: Record<string, unknown>
  longRunning: boolean
  /** With longRunning: 'required' refuses clients without the MCP tasks extension (-32021); default 'optional'. */
  taskSupport?: 'optional' | 'required'
  uiResource?: string
}
export interface ResourceDescriptor {
  uri: string
  name: string
  description: string
  mimeType: string
}
export interface PromptDescriptor {
  name: string
  description: string
  arguments: { name: string; description?: string; required?: boolean }[]
}
export interface AgentDescriptor {
  name: string
  version: string
  description: string
  endpoint: string
  headless: boolean
  /** The single reply to a message goes to every connection of the agent's room (the model runs once). */
  broadcastReply?: boolean
  systemPrompt?: string
  /** A runtime name, or a model name for the active runtime. */
  model?: string
  /** True when the agent defines its own `run(turn, ctx)`, which then answers its turns instead of the default loop. */
  hasRun?: boolean
  scope?: Record<string, unknown>
  tools: ToolDescriptor[]
  /** A coordinator's fleet, as the SDK checked it (defaults filled); the fleet area checks it again. */
  fleet?: AgentRefDescriptor[]
}
/** One agent of a coordinator's fleet. */
export interface AgentRefDescriptor {
  name: string
  version: string
  required: boolean
  weight: number
  maxRetries: number
  circuitBreaker: boolean
  timeoutMs: number
  maxTurns: number
}
export interface PolicyTypeDescriptor {
  type: string
  description: string
}
export interface ClassifierDescriptor {
  name: string
  description: string
}
export interface EmbedderDescriptor {
  name: string
  description: string
}
export interface RuntimeDescriptor {
  name: string
  description: string
  priority: number
  capabilities: string[]
  models: string[]
}

export interface PluginDescriptor {
  tools: ToolDescriptor[]
  resources: ResourceDescriptor[]
  prompts: PromptDescriptor[]
  agents: AgentDescriptor[]
  policyTypes: PolicyTypeDescriptor[]
  classifiers: ClassifierDescriptor[]
  embedders: EmbedderDescriptor[]
  /** Absent in descriptors made before runtimes existed. */
  runtimes?: RuntimeDescriptor[]
}

// --- running contributions ---

export interface InvokeRequest {
  kind: ContributionKind
  /**
   * Tool or prompt name, resource URI, policy type, classifier or embedder name;
   * for an agent's tool: `<agent>/<tool>`.
   */
  name: string
  /**
   * Tool args; `{uri}` for resources; prompt args; `{context, config}` for policy types;
   * `{request, scope}` for classifiers; `{texts}` for embedders; `{request}` for runtimes.
   */
  args: unknown
}

export interface InvokeOptions {
  /** Cancels the call; the plugin sees it as `ctx.signal`. */
  signal?: CancelSignal
  /** Partial results streamed by the plugin (`ctx.progress`). */
  onProgress?: (partial: unknown) => void
}

/** A loaded plugin instance in one sandbox tier. */
export interface SandboxInstance {
  readonly kind: SandboxKind
  readonly descriptor: PluginDescriptor
  invoke(req: InvokeRequest, opts?: InvokeOptions): Promise<unknown>
  dispose(): Promise<void>
}

/** Host-side capabilities handed to a sandbox (only those granted are present). */
export interface Capabilities {
  log: Logger
  kv?: {
    get(key: string): Promise<unknown>
    put(key: string, value: unknown): Promise<void>
    delete(key: string): Promise<boolean>
    list(prefix?: string): Promise<string[]>
  }
  fetch?: (
    url: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string }
  ) => Promise<{ status: number; headers: Record<string, string>; text: string }>
  env?: Record<string, string>
  /** Host calls of an agent's own run (`ctx.model`, `ctx.callTool`); honoured only for an open turn of this plugin. */
  agent?: (op: string, args: unknown[]) => Promise<unknown>
  /** Host calls of a runtime stream's pump (`runtime.pull`); honoured only for an open stream of this plugin. */
  runtime?: (op: string, args: unknown[]) => Promise<unknown>
}

export interface LoadSpec {
  dir: string
  /** Absolute path of the entry module inside `dir`. */
  entry: string
  manifest: Manifest
  grant: EffectiveGrant
  capabilities: Capabilities
  /**
   * Where sandbox deaths are counted (`platform_plugin_failures_total{plugin,reason}`);
   * optional so tests may omit it.
   */
  metrics?: Metrics
  /** Largest JSON result a plugin may return (isolate and worker tiers); 16 MiB when absent. */
  maxResultBytes?: number
  /**
   * isolate tier only: `process` (default, a supervised sandbox process of the pool)
   * or `in-process` (trusted code, benchmarks).
   */
  isolation?: 'process' | 'in-process'
  /**
   * isolate tier only: how plugins are grouped into sandbox processes (`platform.sandbox.isolate.*`);
   * the defaults when absent.
   */
  isolatePool?: { processes: number; pluginsPerProcess: number }
}

export type SandboxFactory = (spec: LoadSpec) => Promise<SandboxInstance>

/** Raised when a plugin call fails inside the plugin (throw, timeout, out of memory, crash). */
export class PluginCallError extends Error {
  constructor(
    readonly plugin: string,
    readonly reason: 'threw' | 'timeout' | 'memory' | 'crashed' | 'cancelled' | 'invalid-result' | 'unavailable',
    message: string
  ) {
    super(message)
    this.name = 'PluginCallError'
  }
}
