import type { Platform } from '../platform.js'
import { AreaKey } from '../contracts/index.js'
import type { AgentScopes } from './agent-scopes.js'
import type { ScopeRuntime } from './scope-runtime.js'

/** What the scope area provides. */
export interface ScopeService {
  /** The embedder, decision model and plugin classifier the scope tiers use. */
  readonly runtime: ScopeRuntime
  /** The scope policies of the plugin agents (what the AI pipeline puts before an agent's turns). */
  readonly agents: AgentScopes
}

export const SCOPE = new AreaKey<ScopeService>('scope')

/** The scope runtime of an installed scope area. */
export function scopeRuntimeOf(platform: Platform): ScopeRuntime {
  return platform.area(SCOPE).runtime
}

/** The scope policies of the platform's plugin agents. */
export function agentScopesOf(platform: Platform): AgentScopes {
  return platform.area(SCOPE).agents
}
