/** Scope confinement (rules 1-8 of docs/scope.md): tiers, embedders, the scope policy, the preamble. */
export { scopePolicyFactory, scopePolicyForAgent } from './factory.js'
export { confineSystemPrompt } from './preamble.js'
export { scopeRuntimeOf } from './key.js'
