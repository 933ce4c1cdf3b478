import type {
  InvokeOptions,
  ToolDescriptor,
  ResourceDescriptor,
  PromptDescriptor,
  AgentDescriptor,
  PolicyTypeDescriptor,
  ClassifierDescriptor,
  EmbedderDescriptor,
  RuntimeDescriptor
} from './contract.js'
import type { StopSignal } from './runtime-streams.js'

// What the registry hands out per kind of contribution: the plugin's descriptor, bound to its instance.

export interface RegisteredTool extends ToolDescriptor {
  plugin: string
  /** Set for an agent's own tools (served on the agent's MCP endpoint). */
  agent?: string
  call(args: unknown, opts?: InvokeOptions): Promise<unknown>
}
export interface RegisteredResource extends ResourceDescriptor {
  plugin: string
  read(uri: string, opts?: InvokeOptions): Promise<unknown>
}
export interface RegisteredPrompt extends PromptDescriptor {
  plugin: string
  get(args: Record<string, string>, opts?: InvokeOptions): Promise<unknown>
}
export interface RegisteredAgent extends Omit<AgentDescriptor, 'tools'> {
  plugin: string
  tools: RegisteredTool[]
  /** The agent's own turn handler, run in its plugin's sandbox; present when the agent defines `run`. */
  run?(turn: unknown, opts?: InvokeOptions, turnId?: string): Promise<unknown>
}
export interface RegisteredPolicyType extends PolicyTypeDescriptor {
  plugin: string
  evaluate(context: unknown, config: unknown, opts?: InvokeOptions): Promise<unknown>
}
export interface RegisteredClassifier extends ClassifierDescriptor {
  plugin: string
  classify(request: unknown, scope: unknown, opts?: InvokeOptions): Promise<unknown>
}
/**
 * A plugin AI runtime: `stream` yields the events of one request (unchecked, as the plugin sent
 * them) while the plugin yields them; it throws when the plugin call fails. `opts.signal` or
 * `return()` stops the plugin's generator.
 */
export interface RegisteredRuntime extends RuntimeDescriptor {
  plugin: string
  stream(request: unknown, opts?: { signal?: StopSignal }): AsyncIterableIterator<unknown>
}
export interface RegisteredEmbedder extends EmbedderDescriptor {
  plugin: string
  embed(texts: string[], opts?: InvokeOptions): Promise<number[][]>
}
