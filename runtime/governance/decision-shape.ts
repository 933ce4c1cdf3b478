/** What the gate and `/check` accept from a policy as a decision, and what a thrown error becomes. */
import { PlatformError, type AiRequest, type PolicyDecision } from '../contracts/index.js'
import { GOVERNANCE_ERRORS } from './errors.js'

/** Marks a thrown error (POLICY_THREW) so its message becomes the deny reason (fail closed). */
export function errorDecision(err: unknown): PlatformError {
  const msg = err instanceof Error ? err.message : String(err)
  return new PlatformError(GOVERNANCE_ERRORS.POLICY_THREW, {
    detail: msg === '' ? (err instanceof Error ? err.name : 'policy threw') : msg
  })
}

/** A decision object of one of the four shapes, or null. */
export function validate(d: unknown): PolicyDecision | null {
  if (typeof d !== 'object' || d === null || d instanceof Error) return null
  const v = d as Record<string, unknown>
  switch (v.decision) {
    case 'admit':
      return d as PolicyDecision
    case 'deny':
      return typeof v.reason === 'string' ? (d as PolicyDecision) : null
    case 'prefer':
      return typeof v.preferred === 'string' && typeof v.reason === 'string' ? (d as PolicyDecision) : null
    case 'transform':
      return isRequest(v.request) && (v.reason === undefined || typeof v.reason === 'string')
        ? (d as PolicyDecision)
        : null
    default:
      return null
  }
}

/** `validate(d)?.decision === 'admit'`, without the switch: the gate's most common answer. */
export function isAdmit(d: unknown): boolean {
  return (
    typeof d === 'object' && d !== null && !(d instanceof Error) && (d as { decision?: unknown }).decision === 'admit'
  )
}

function isRequest(r: unknown): r is AiRequest {
  if (typeof r !== 'object' || r === null) return false
  const q = r as Record<string, unknown>
  return typeof q.message === 'string' && typeof q.metadata === 'object' && q.metadata !== null
}
