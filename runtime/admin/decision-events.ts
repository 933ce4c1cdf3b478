/**
 * Governance decisions on the admin event stream: every entry the decision log records becomes a
 * small `GovernanceDecision` event (policy, decision, reason, agent, phase; not the context
 * snapshot, whose message is content: `/api/admin/governance/decisions` has the details).
 * Evaluations run several times per turn, so the listener first asks whether anyone watches the
 * stream and builds nothing when nobody does.
 */
import type { DecisionEntry } from '../contracts/index.js'
import type { PlatformEvent } from '../events/index.js'
import type { GovernanceDecisionLog } from '../governance/index.js'
import type { AdminEventStream } from './event-stream.js'

export function decisionEvent(e: DecisionEntry): PlatformEvent<'GovernanceDecision'> {
  const s = e.context_snapshot
  return {
    type: 'GovernanceDecision',
    policy: e.policy_name,
    decision: e.decision,
    reason: e.reason,
    agentId: typeof s.agent_id === 'string' ? s.agent_id : null,
    phase: typeof s.phase === 'string' ? s.phase : '',
    // when the gate ran, as the decision log has it: the viewer matches live rows to logged ones
    timestamp: e.timestamp
  }
}

export function streamDecisions(log: GovernanceDecisionLog, stream: AdminEventStream): void {
  log.onRecord((e) => {
    if (stream.watched) stream.take(decisionEvent(e))
  })
}
