import type { PluginDef, Ctx } from './index.js'
export declare function describePlugin(def: unknown): PluginDescriptor
export declare function startContribution(
  def: Readonly<Required<PluginDef>>,
  req: { kind: string; name: string; args: unknown },
  ctx: Ctx,
  hostCall?: (op: string, args: unknown[]) => Promise<unknown>
): unknown
export declare function invokeContribution(
  def: Readonly<Required<PluginDef>>,
  req: { kind: string; name: string; args: unknown },
  ctx: Ctx,
  hostCall?: (op: string, args: unknown[]) => Promise<unknown>
): Promise<unknown>

// --- descriptors: the plain data describePlugin() reports; the runtime imports these types ---

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
