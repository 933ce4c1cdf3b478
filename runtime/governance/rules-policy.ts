/**
 * The third-party toolkit's `rules:` document (AGT v4 PolicyDocument) as ONE GovernancePolicy:
 * rules sorted by priority descending (stable, so ties keep file order), first match decides,
 * `defaults.action` when nothing matches. Conditions are compiled once at load.
 */
import type { Logger } from 'pino'
import {
  PlatformError,
  admit,
  deny,
  type GovernancePolicy,
  type PolicyContext,
  type PolicyDecision
} from '../contracts/index.js'
import { GOVERNANCE_ERRORS } from './errors.js'
import { compileTest, type Test } from './rule-operators.js'
import { isMap } from './safe-yaml.js'
import { KeyChecker } from './strict-keys.js'

const ROOT_KEYS = ['version', 'name', 'description', 'rules', 'defaults']
const RULE_KEYS = ['name', 'condition', 'action', 'priority', 'message']
const CONDITION_KEYS = ['field', 'operator', 'value']
// the toolkit's other defaults (sandbox and budget hints) are accepted and not enforced
const DEFAULTS_KEYS = [
  'action',
  'max_tokens',
  'max_tool_calls',
  'confidence_threshold',
  'max_cpu',
  'max_memory_mb',
  'timeout_seconds',
  'network_default'
]

export const RULE_ACTIONS = ['allow', 'deny', 'audit', 'block'] as const
export type RuleAction = (typeof RULE_ACTIONS)[number]

type Getter = (ctx: PolicyContext) => unknown

interface CompiledRule {
  readonly name: string
  readonly field: string
  readonly get: Getter
  readonly test: Test
  readonly action: RuleAction
  readonly priority: number
  readonly denyReason: string
}

const REQUEST_FIELDS: Record<string, Getter> = {
  message: (c) => c.request.message ?? c.request.metadata.message,
  system_prompt: (c) => c.request.systemPrompt ?? c.request.metadata.system_prompt,
  model: (c) => c.request.model ?? c.request.metadata.model,
  user_id: (c) => c.request.userId ?? c.request.metadata.user_id,
  session_id: (c) => c.request.sessionId ?? c.request.metadata.session_id,
  agent_id: (c) => c.request.agentId ?? c.request.metadata.agent_id,
  conversation_id: (c) => c.request.conversationId ?? c.request.metadata.conversation_id,
  phase: (c) => (c.phase === 'PRE_ADMISSION' ? 'pre_admission' : 'post_response'),
  response: (c) =>
    c.accumulatedResponse !== '' && c.accumulatedResponse !== undefined
      ? c.accumulatedResponse
      : c.request.metadata.response
}

/** A field naming a client claim: `client.<key>` reads the client's own metadata, and only that. */
export const CLIENT_FIELD_PREFIX = 'client.'

/**
 * Resolves a condition field: request fields first (when set), then the server's metadata by exact
 * key. The client's metadata only through `client.<key>`: a claim never stands in for a fact, so
 * `user_id` or `tool_name` cannot be set by what a client sends.
 */
function getterFor(field: string): Getter {
  const g = REQUEST_FIELDS[field]
  if (g !== undefined) return g
  if (field.startsWith(CLIENT_FIELD_PREFIX) && field.length > CLIENT_FIELD_PREFIX.length) {
    const key = field.slice(CLIENT_FIELD_PREFIX.length)
    return (c) => {
      const cm = c.request.clientMetadata
      return cm != null && Object.hasOwn(cm, key) ? cm[key] : undefined
    }
  }
  return (c) => (Object.hasOwn(c.request.metadata, field) ? c.request.metadata[field] : undefined)
}

export class RulesPolicy implements GovernancePolicy {
  readonly className = 'RulesPolicy'
  readonly description: string

  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    description: string,
    readonly rules: readonly CompiledRule[],
    readonly defaultAction: RuleAction,
    private readonly logger?: Logger
  ) {
    this.description = description
  }

  evaluate(ctx: PolicyContext): PolicyDecision {
    const rules = this.rules
    for (let i = 0; i < rules.length; i++) {
      const r = rules[i]!
      const v = r.get(ctx)
      if (v === undefined || v === null) continue // a missing field never matches, even for ne / not_in
      if (!r.test(v)) continue
      return this.act(r.action, r.denyReason, r.name, r.field)
    }
    const d = this.defaultAction
    return this.act(d, `no rule matched; default action is ${d}`, null, null)
  }

  private act(action: RuleAction, reason: string, rule: string | null, field: string | null): PolicyDecision {
    switch (action) {
      case 'allow':
        return ADMIT
      case 'audit':
        this.logger?.info(
          { policy: this.name, source: this.source, rule, field, action: 'audit' },
          `governance audit: policy ${this.name} matched ${rule === null ? 'no rule (default action audit)' : `rule '${rule}'`}`
        )
        return ADMIT
      default:
        return deny(reason)
    }
  }
}

const ADMIT = admit()

/** Builds the policy from a parsed `rules:` document; every problem names the rule. */
export function buildRulesPolicy(
  doc: Record<string, unknown>,
  source: string,
  logger?: Logger,
  keys = new KeyChecker(source)
): RulesPolicy {
  keys.check(doc, ROOT_KEYS, [], 'the rules document')
  const name = optString(doc.name, 'name', source) ?? 'unnamed'
  const version = optScalar(doc.version, 'version', source) ?? '1.0'
  const description = optString(doc.description, 'description', source) ?? ''
  if (!Array.isArray(doc.rules))
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, { detail: `'rules' must be a list in ${source}` })
  const compiled: CompiledRule[] = doc.rules.map((raw, i) => compileRule(raw, i, source, keys))
  // Array.prototype.sort is stable: rules of equal priority keep their order in the file
  compiled.sort((a, b) => b.priority - a.priority)
  let defaultAction: RuleAction = 'allow'
  if (doc.defaults !== undefined && doc.defaults !== null) {
    if (!isMap(doc.defaults))
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, { detail: `'defaults' must be a map in ${source}` })
    keys.check(doc.defaults, DEFAULTS_KEYS, ['defaults'], "'defaults'")
    if (doc.defaults.action !== undefined && doc.defaults.action !== null)
      defaultAction = parseAction(doc.defaults.action, `defaults.action in ${source}`)
  }
  return new RulesPolicy(name, source, version, description, compiled, defaultAction, logger)
}

function compileRule(raw: unknown, i: number, source: string, keys: KeyChecker): CompiledRule {
  const label = isMap(raw) && typeof raw.name === 'string' ? `rules[${i}] ('${raw.name}')` : `rules[${i}]`
  const where = `${label} in ${source}`
  if (!isMap(raw))
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, { detail: `${where}: a rule must be a map` })
  keys.check(raw, RULE_KEYS, ['rules', i], label)
  if (typeof raw.name !== 'string' || raw.name.trim() === '')
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, { detail: `${where}: 'name' is required` })
  const cond = raw.condition
  if (!isMap(cond))
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
      detail: `${where}: 'condition' is required and must be a map of field, operator, value`
    })
  keys.check(cond, CONDITION_KEYS, ['rules', i, 'condition'], `the condition of ${label}`)
  if (typeof cond.field !== 'string' || cond.field === '')
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, { detail: `${where}: condition 'field' is required` })
  if (typeof cond.operator !== 'string')
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
      detail: `${where}: condition 'operator' is required`
    })
  if (!Object.hasOwn(cond, 'value'))
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, { detail: `${where}: condition 'value' is required` })
  const test = compileTest(cond.operator, cond.value, where)
  if (!Object.hasOwn(raw, 'action'))
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
      detail: `${where}: 'action' is required (allow, deny, audit, block)`
    })
  const action: RuleAction = raw.action === '' || raw.action === null ? 'allow' : parseAction(raw.action, where)
  let priority = 0
  if (raw.priority !== undefined && raw.priority !== null) {
    if (typeof raw.priority !== 'number' || !Number.isInteger(raw.priority))
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
        detail: `${where}: 'priority' must be an integer`
      })
    priority = raw.priority
  }
  const message = raw.message === undefined || raw.message === null ? '' : String(raw.message)
  return {
    name: raw.name,
    field: cond.field,
    get: getterFor(cond.field),
    test,
    action,
    priority,
    denyReason: message !== '' ? message : `matched rule '${raw.name}'`
  }
}

function parseAction(v: unknown, where: string): RuleAction {
  const s = typeof v === 'string' ? v.toLowerCase() : v
  if (typeof s === 'string' && (RULE_ACTIONS as readonly string[]).includes(s)) return s as RuleAction
  throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
    detail: `unknown action '${String(v)}' at ${where} (supported: ${RULE_ACTIONS.join(', ')})`
  })
}

function optString(v: unknown, key: string, source: string): string | undefined {
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string')
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, { detail: `'${key}' must be a string in ${source}` })
  return v
}

function optScalar(v: unknown, key: string, source: string): string | undefined {
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string' && typeof v !== 'number')
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, { detail: `'${key}' must be a string in ${source}` })
  return String(v)
}
