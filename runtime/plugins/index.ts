export {
  type SandboxKind,
  type Manifest,
  type ToolDescriptor,
  type AgentRefDescriptor,
  type SandboxInstance,
  type LoadSpec,
  PluginCallError
} from './contract.js'
export {
  PluginRegistry,
  contributionNames,
  type RegisteredTool,
  type RegisteredResource,
  type RegisteredPrompt,
  type RegisteredAgent,
  type RegisteredPolicyType,
  type RegisteredClassifier,
  type RegisteredEmbedder,
  type RegisteredRuntime,
  type PluginStatus
} from './registry.js'
export { type AgentTurnHandlers } from './agent-turns.js'
export { RuntimeStreams } from './runtime-streams.js'
export { Cancellation, abortSignalOf, type CancelSignal } from './cancel.js'
export { loadInline } from './inline.js'
export { NAME_PATTERN, ManifestError, readManifest } from './manifest.js'
export { GrantRefused, grantLine, resolveGrant } from './grants.js'
export { buildCapabilities } from './capabilities.js'
export { TierUnavailable, tierFactory } from './tiers.js'
export { PluginHost } from './host.js'
export { PLUGIN_HOST } from './key.js'
export { loadIsolate } from './isolate/index.js'
export { loadWorker } from './worker/index.js'
