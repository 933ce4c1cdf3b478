/**
 * The policy contracts governance, scope and the AI pipeline share. Policies are functions of a
 * PolicyContext returning one of four decisions; a policy that throws denies (fail closed).
 * Built-in policies are synchronous; policy types from sandboxed plugins and remote scope tiers
 * may answer asynchronously.
 */
export type Phase = 'PRE_ADMISSION' | 'POST_RESPONSE'

export interface AiRequest {
  message: string
  systemPrompt: string
  model: string | null
  userId: string | null
  sessionId: string | null
  agentId: string | null
  conversationId: string | null
  /**
   * Facts the server sets about the request (roles from the credentials, `action: call_tool`,
   * `tool_name`, the A2A task, the fleet dispatch, ...): what policies may trust. Nothing a client
   * sends is ever copied here.
   */
  metadata: Record<string, unknown>
  /**
   * What the client sent as its own metadata (an agent prompt's `metadata`, an interaction's, an
   * A2A message's, AG-UI `forwardedProps`): claims, never facts. A rule reads one only by naming
   * it as such (`client.<key>`); identity, roles, action, tool and agent never come from here.
   */
  clientMetadata: Record<string, unknown>
}

export interface PolicyContext {
  phase: Phase
  request: AiRequest
  /** Meaningful in POST_RESPONSE. */
  accumulatedResponse: string
  /**
   * A question, not a request (`/check`): policies decide as they would, but stateful ones
   * (rate-limit, concurrency-limit) neither count it nor take a slot.
   */
  dryRun?: boolean
}

export type PolicyDecision =
  | { decision: 'admit' }
  /** `reason` says what was changed and why (`/check` and the decision log show it). */
  | { decision: 'transform'; request: AiRequest; reason?: string }
  | { decision: 'deny'; reason: string }
  | { decision: 'prefer'; preferred: string; reason: string }

export interface GovernancePolicy {
  /** Stable identifier for the audit trail; the chain is de-duplicated by it. */
  readonly name: string
  /** `yaml:<path>`, `plugin:<name>`, `code:<name>`, `annotation:<agent>` */
  readonly source: string
  readonly version: string
  /** Implementation name shown in listings (`className` on the wire). */
  readonly className: string
  /**
   * The one agent whose turns this policy governs (an agent's scope); the gate skips it on every
   * other request, so a turn's decision log holds no verdicts of other agents' policies.
   * Undefined or null: every request.
   */
  readonly agent?: string | null
  evaluate(ctx: PolicyContext): PolicyDecision | Promise<PolicyDecision>
}

/** What a YAML `type:` factory receives. */
export interface PolicyDescriptor {
  name: string
  source: string
  version: string
  config: Record<string, unknown>
}

export type PolicyFactory = (d: PolicyDescriptor) => GovernancePolicy

export const admit = (): PolicyDecision => ({ decision: 'admit' })
export const deny = (reason: string): PolicyDecision => ({ decision: 'deny', reason })
export const transform = (request: AiRequest, reason?: string): PolicyDecision =>
  reason === undefined ? { decision: 'transform', request } : { decision: 'transform', request, reason }
export const prefer = (preferred: string, reason: string): PolicyDecision => ({ decision: 'prefer', preferred, reason })

export function aiRequest(partial: Partial<AiRequest> & { message: string }): AiRequest {
  return {
    systemPrompt: '',
    model: null,
    userId: null,
    sessionId: null,
    agentId: null,
    conversationId: null,
    metadata: {},
    clientMetadata: {},
    ...partial
  }
}
