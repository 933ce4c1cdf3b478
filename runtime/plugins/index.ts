export {
  type SandboxKind,
  type Manifest,
  type ToolDescriptor,
  type AgentRefDescriptor,
  type SandboxInstance,
  type LoadSpec,
  pluginCallFailure
} from './contract.js'
export { PluginRegistry } from './registry.js'
export type {
  RegisteredTool,
  RegisteredResource,
  RegisteredPrompt,
  RegisteredAgent,
  RegisteredPolicyType,
  RegisteredClassifier,
  RegisteredEmbedder,
  RegisteredRuntime
} from './registered.js'
export { contributionNames, type PluginStatus } from './plugin-status.js'
export { type AgentTurnHandlers } from './agent-turns.js'
export { RuntimeStreams } from './runtime-streams.js'
export { Cancellation, abortSignalOf, type CancelSignal } from './cancel.js'
export { Deadlines } from './deadlines.js'
export { loadInline } from './inline.js'
export { NAME_PATTERN, readManifest } from './manifest.js'
export { grantLine, resolveGrant } from './grants.js'
export { buildCapabilities, lmdbPluginKv } from './capabilities.js'
export { pluginKvFromConfig } from './kv-from-config.js'
export { tierFactory, loadWorker } from './tiers.js'
export { PLUGINS_ERRORS } from './errors.js'
export { PluginHost, type PluginHostOptions } from './host.js'
export { loadIsolate, LoopWatch } from './isolate/index.js'
export { spinningWait } from './worker/index.js'
