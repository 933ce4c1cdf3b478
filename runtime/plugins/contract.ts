/**
 * The contracts between the plugin host and everything that reads what plugins contribute
 * (MCP, governance, scope, agents). Functions never cross a sandbox boundary: a sandbox loads a
 * plugin, reports a descriptor (plain data), and runs contributions by (kind, name) on request.
 */
import type { CancelSignal } from './cancel.js'
import type { Logger } from 'pino'
import type { Metrics } from '../observability/index.js'
import type { PluginDescriptor } from 'uws-agent-platform/sdk/dispatch'
import { PlatformError, isPlatformError } from '../contracts/index.js'
import { PLUGINS_ERRORS } from './errors.js'

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
// The sdk's describePlugin() makes them, so the sdk declares them (sdk/dispatch.d.ts); the runtime
// imports them from there and never the other way round.

export type {
  ToolDescriptor,
  ResourceDescriptor,
  PromptDescriptor,
  AgentDescriptor,
  AgentRefDescriptor,
  PolicyTypeDescriptor,
  ClassifierDescriptor,
  EmbedderDescriptor,
  RuntimeDescriptor,
  PluginDescriptor
} from 'uws-agent-platform/sdk/dispatch'

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
  /**
   * worker and isolate tiers: how long a sandbox that answered watches for the next call before it
   * sleeps (µs, `platform.sandbox.spin-us`); 50 when absent.
   */
  spinUs?: number
}

export type SandboxFactory = (spec: LoadSpec) => Promise<SandboxInstance>

/** Why a plugin call failed: the `reason` of PLUGIN_CALL_FAILED. */
export type PluginCallReason =
  'threw' | 'timeout' | 'memory' | 'crashed' | 'cancelled' | 'invalid-result' | 'unavailable'

/** A plugin call that failed inside the plugin (throw, timeout, out of memory, crash): PLUGIN_CALL_FAILED. */
export function pluginCallError(plugin: string, reason: PluginCallReason, message: string): PlatformError {
  return new PlatformError(PLUGINS_ERRORS.PLUGIN_CALL_FAILED, { plugin, reason, detail: message })
}

/** The plugin and reason of a PLUGIN_CALL_FAILED; undefined for any other error. */
export function pluginCallFailure(err: unknown): { plugin: string; reason: PluginCallReason } | undefined {
  if (!isPlatformError(err, PLUGINS_ERRORS.PLUGIN_CALL_FAILED)) return undefined
  return { plugin: String(err.params.plugin), reason: err.params.reason as PluginCallReason }
}
