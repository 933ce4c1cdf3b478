import { PlatformError } from '../contracts/index.js'
import { SCOPE_ERRORS } from './errors.js'
import { DEFAULT_REDIRECT, type Breach, type ScopeConfig, type Tier } from './contract.js'

export const TIERS: readonly Tier[] = ['RULE_BASED', 'EMBEDDING_SIMILARITY', 'SEMANTIC_INTENT', 'LLM_CLASSIFIER']
export const BREACHES: readonly Breach[] = ['POLITE_REDIRECT', 'DENY', 'CUSTOM_MESSAGE']
export const DEFAULT_THRESHOLD = 0.45

/** The attribute names of one spelling: kebab-case in YAML, camelCase on the SDK `agent({scope})`. */
interface Names {
  purpose: string
  forbiddenTopics: string
  onBreach: string
  redirectMessage: string
  tier: string
  similarityThreshold: string
  unrestricted: string
  justification: string
  postResponseCheck: string
}
const KEBAB: Names = {
  purpose: 'purpose',
  forbiddenTopics: 'forbidden-topics',
  onBreach: 'on-breach',
  redirectMessage: 'redirect-message',
  tier: 'tier',
  similarityThreshold: 'similarity-threshold',
  unrestricted: 'unrestricted',
  justification: 'justification',
  postResponseCheck: 'post-response-check'
}
const CAMEL: Names = {
  purpose: 'purpose',
  forbiddenTopics: 'forbiddenTopics',
  onBreach: 'onBreach',
  redirectMessage: 'redirectMessage',
  tier: 'tier',
  similarityThreshold: 'similarityThreshold',
  unrestricted: 'unrestricted',
  justification: 'justification',
  postResponseCheck: 'postResponseCheck'
}

export interface ScopeBinding {
  /** The agent id the scope applies to; null applies it to every request. */
  agent: string | null
  config: ScopeConfig
}

/** The YAML `type: scope` config (kebab-case keys, plus `agent`). */
export function scopeFromPolicyConfig(raw: unknown): ScopeBinding {
  const obj = raw ?? {}
  if (typeof obj !== 'object' || Array.isArray(obj))
    throw new PlatformError(SCOPE_ERRORS.SCOPE_CONFIG_INVALID, { detail: 'scope: config must be a map' })
  const { agent, ...rest } = obj as Record<string, unknown>
  if (agent !== undefined && (typeof agent !== 'string' || agent.trim() === ''))
    throw new PlatformError(SCOPE_ERRORS.SCOPE_CONFIG_INVALID, {
      detail: "scope: 'agent' must be a non-blank agent id"
    })
  return { agent: agent === undefined ? null : agent.trim(), config: parse(rest, KEBAB, ['agent'], 'scope') }
}

/** The SDK `agent({scope})` attributes (camelCase), with the `@AgentScope` defaults. */
export function scopeFromAgentAttributes(raw: unknown, agentName = '?'): ScopeConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new PlatformError(SCOPE_ERRORS.SCOPE_CONFIG_INVALID, {
      detail: `agent '${agentName}' scope: must be an object`
    })
  return parse(raw as Record<string, unknown>, CAMEL, [], `agent '${agentName}' scope`)
}

function parse(o: Record<string, unknown>, n: Names, extra: string[], where: string): ScopeConfig {
  const known = [...extra, ...Object.values(n)]
  for (const k of Object.keys(o)) {
    if (o[k] !== undefined && !known.includes(k))
      throw new PlatformError(SCOPE_ERRORS.SCOPE_CONFIG_INVALID, {
        detail: `${where}: unknown key '${k}' (known: ${known.join(', ')})`
      })
  }
  const fail = (msg: string): never => {
    throw new PlatformError(SCOPE_ERRORS.SCOPE_CONFIG_INVALID, { detail: `${where}: ${msg}` })
  }
  const str = (k: string): string => {
    const v = o[k]
    if (v === undefined || v === null) return ''
    if (typeof v !== 'string') return fail(`'${k}' must be a string`)
    return v
  }
  const bool = (k: string): boolean => {
    const v = o[k]
    if (v === undefined || v === null) return false
    if (typeof v !== 'boolean') return fail(`'${k}' must be true or false`)
    return v
  }
  const oneOf = <T extends string>(k: string, all: readonly T[], dflt: T): T => {
    const v = o[k]
    if (v === undefined || v === null) return dflt
    const norm = typeof v === 'string' ? v.trim().toUpperCase().replace(/-/g, '_') : ''
    if (!(all as readonly string[]).includes(norm))
      return fail(`'${k}' must be one of ${all.join(', ')} (got ${JSON.stringify(v)})`)
    return norm as T
  }

  const unrestricted = bool(n.unrestricted)
  const justification = str(n.justification)
  const purpose = str(n.purpose).trim()
  if (unrestricted && justification.trim() === '')
    fail(`'${n.justification}' must not be blank when '${n.unrestricted}' is true`)
  if (!unrestricted && purpose === '') fail(`'${n.purpose}' is required unless '${n.unrestricted}' is true`)

  const rawTopics = o[n.forbiddenTopics] ?? []
  if (!Array.isArray(rawTopics) || rawTopics.some((t) => typeof t !== 'string' || t.trim() === ''))
    fail(`'${n.forbiddenTopics}' must be a list of non-blank strings`)
  const forbiddenTopics = (rawTopics as string[]).map((t) => t.trim())

  const rawThreshold = o[n.similarityThreshold]
  let similarityThreshold = DEFAULT_THRESHOLD
  if (rawThreshold !== undefined && rawThreshold !== null) {
    if (typeof rawThreshold !== 'number' || !Number.isFinite(rawThreshold) || rawThreshold < 0 || rawThreshold > 1)
      fail(`'${n.similarityThreshold}' must be a number from 0 to 1 (got ${JSON.stringify(rawThreshold)})`)
    similarityThreshold = rawThreshold as number
  }

  const onBreach = oneOf(n.onBreach, BREACHES, 'POLITE_REDIRECT')
  const redirect = str(n.redirectMessage)
  if (onBreach === 'CUSTOM_MESSAGE' && redirect.trim() === '')
    fail(`'${n.redirectMessage}' must not be blank when '${n.onBreach}' is CUSTOM_MESSAGE`)

  return Object.freeze({
    purpose,
    forbiddenTopics: Object.freeze(forbiddenTopics) as string[],
    onBreach,
    redirectMessage: redirect.trim() === '' ? DEFAULT_REDIRECT : redirect,
    tier: oneOf(n.tier, TIERS, 'EMBEDDING_SIMILARITY'),
    similarityThreshold,
    unrestricted,
    justification,
    postResponseCheck: bool(n.postResponseCheck)
  })
}
