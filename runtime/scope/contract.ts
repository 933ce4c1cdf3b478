/**
 * Scope confinement contracts (ScopeGuardrail and its verdicts). The scope policy type in
 * governance wraps a ScopeGuardrail as a GovernancePolicy.
 */
import type { AiRequest } from '../contracts/index.js'

export type Breach = 'POLITE_REDIRECT' | 'DENY' | 'CUSTOM_MESSAGE'
export type Tier = 'RULE_BASED' | 'EMBEDDING_SIMILARITY' | 'SEMANTIC_INTENT' | 'LLM_CLASSIFIER'

export const DEFAULT_REDIRECT =
  "I can only help with topics within this assistant's declared scope. What can I help you with on that?"

export interface ScopeConfig {
  purpose: string
  forbiddenTopics: string[]
  onBreach: Breach
  redirectMessage: string
  tier: Tier
  similarityThreshold: number
  unrestricted: boolean
  justification: string
  postResponseCheck: boolean
}

export interface ScopeVerdict {
  outcome: 'IN_SCOPE' | 'OUT_OF_SCOPE' | 'ERROR'
  reason: string
  similarity: number
}

export interface ScopeGuardrail {
  tier(): Tier
  evaluate(request: AiRequest, scope: ScopeConfig): ScopeVerdict | Promise<ScopeVerdict>
}

/** Embedding runtime contract: one vector per text. */
export interface Embedder {
  readonly name: string
  embed(texts: string[]): Promise<number[][]>
}
