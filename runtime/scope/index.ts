/** Scope confinement (rules 1-8 of docs/scope.md): tiers, embedders, the scope policy, the preamble. */
export * from './contract.js'
export { RuleBasedScopeGuardrail, HIJACKING_PROBES, containsWord } from './rule-based.js'
export { EmbeddingScopeGuardrail, VectorCache } from './embedding.js'
export { SemanticIntentScopeGuardrail, DEFAULT_MARGIN } from './semantic-intent.js'
export { LlmClassifierScopeGuardrail, scopeQuestion } from './llm-classifier.js'
export {
  judgeNoul,
  FLAGGED_AT,
  CLEAR_BELOW,
  MAX_STATE_CHARS,
  DEFAULT_DECISION_TIMEOUT_MS,
  type DecisionModel,
  type Answer,
  type NoulQuestion,
  type NoulVerdict,
  type FailureReason
} from './decision-model.js'
export { OpenAiDecisionModel, parseAnswer } from './openai-decision-model.js'
export { OpenAiEmbedder, EmbedderError } from './openai-embedder.js'
export { LexicalEmbedder, LEXICAL_DIMENSIONS } from './lexical-embedder.js'
export type { OpenAiEndpoint } from './openai-http.js'
export { cosineSimilarity, round4 } from './similarity.js'
export {
  ScopeConfigError,
  scopeFromPolicyConfig,
  scopeFromAgentAttributes,
  TIERS,
  BREACHES,
  DEFAULT_THRESHOLD,
  type ScopeBinding
} from './scope-config.js'
export { ScopePolicy, REDIRECT_METADATA_KEY } from './scope-policy.js'
export {
  createScopePolicy,
  scopePolicyFactory,
  scopePolicyForAgent,
  guardrailFor,
  bareScopeRuntime
} from './factory.js'
export {
  hardenSystemPrompt,
  confineSystemPrompt,
  hasScopePolicy,
  asScopePolicy,
  scopeHardeningBlock,
  PREAMBLE_HEADING
} from './preamble.js'
export { lintAgentScopes, lintPluginDirectory, type AgentScopeFinding } from './lint.js'
export { SCOPE, scopeRuntimeOf, agentScopesOf, type ScopeService } from './key.js'
export { AgentScopes } from './agent-scopes.js'
export type { ScopeRuntime, PluginClassifier } from './scope-runtime.js'
export {
  setSystemProperty,
  getSystemProperty,
  clearSystemProperty,
  booleanSystemProperty,
  SEMANTIC_FAIL_OPEN_PROPERTY,
  LLM_FAIL_OPEN_PROPERTY
} from './system-properties.js'
