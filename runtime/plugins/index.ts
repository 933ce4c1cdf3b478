export * from './contract.js'
export { PluginRegistry, type RegisteredTool, type RegisteredResource, type RegisteredPrompt, type RegisteredAgent, type RegisteredPolicyType, type RegisteredClassifier, type RegisteredEmbedder, type PluginStatus, type PluginState } from './registry.js'
export { inlineInstance, loadInline, pluginCtx } from './inline.js'
export { loadIsolate, DEFAULT_MAX_RESULT_BYTES } from './isolate/index.js'
