export * from './contract.js'
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
export { contributionNames, type PluginStatus, type PluginState } from './plugin-status.js'
export { AgentTurns, type AgentTurnHandlers } from './agent-turns.js'
export { RuntimeStreams, PluginEventStream, STREAM_WINDOW, type StopSignal } from './runtime-streams.js'
export { Cancellation, abortSignalOf, type CancelSignal } from './cancel.js'
export { inlineInstance, loadInline, pluginCtx } from './inline.js'
export { ensurePluginModuleHooks, sdkUrl } from './module-hooks.js'
export {
  MANIFEST_SCHEMA,
  MANIFEST_FILE,
  NAME_PATTERN,
  DEFAULT_LIMITS,
  DEFAULT_SANDBOX,
  ManifestError,
  parseManifest,
  readManifest,
  type ParsedManifest
} from './manifest.js'
export { GrantRefused, grantLine, operatorGrant, resolveGrant, type OperatorGrant } from './grants.js'
export {
  buildCapabilities,
  kvCapability,
  fetchCapability,
  FETCH_MAX_BYTES,
  type CapabilityDeps,
  type KvDatabase
} from './capabilities.js'
export { TIERS, TierUnavailable, tierFactory, type TierMap } from './tiers.js'
export { loadPluginDir, type LoadOutcome } from './loader.js'
export { PluginHost, type PluginHostOptions } from './host.js'
export { loadIsolate, DEFAULT_MAX_RESULT_BYTES } from './isolate/index.js'
export { loadWorker } from './worker/index.js'
