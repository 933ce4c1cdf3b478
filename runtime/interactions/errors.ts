import { defineErrors } from '../contracts/index.js'

/**
 * The interactions area's codes: the write gate's flag and principal, ids, bodies, idempotency keys.
 */
export const INTERACTION_ERRORS = defineErrors({
  INTERACTIONS_WRITE_DISABLED: {
    status: 403,
    message: 'Interaction write operations disabled',
    hint: 'Set platform.interactions.http-write-enabled=true to enable'
  },
  INTERACTIONS_AUTH_REQUIRED: {
    status: 401,
    message: 'Authentication required for interaction write operations',
    hint: 'Send an API token (Authorization: Bearer or X-Platform-Auth) or a JWT'
  },
  INTERACTION_ID_INVALID: {
    status: 400,
    message: 'Invalid interaction id',
    hint: 'An interaction id matches ^[A-Za-z0-9_-]{1,128}$'
  },
  INTERACTION_NOT_FOUND: { status: 404, message: (p) => `Unknown interaction '${p.id}'` },
  INTERACTION_ENDED: {
    status: 409,
    message: (p) => `Interaction '${p.id}' has ended already`,
    hint: 'A run ends once: nothing is written after its terminal step; read the interaction for its outcome'
  },
  INTERACTION_MESSAGE_MISSING: { status: 400, message: "missing 'message' field" },
  INTERACTIONS_QUOTA: {
    status: 429,
    message: (p) => `Interaction quota reached: at most ${p.over} per principal`,
    hint: 'Wait for Retry-After seconds; platform.interactions.quota.runs-in-flight and platform.interactions.quota.bytes-per-minute set the quota'
  },
  INTERACTIONS_QUOTA_UNCOUNTED: {
    status: 503,
    message:
      'The interaction quota cannot be counted: the shared counters cannot be reached, so runs are refused until they can (fail closed)',
    hint: 'Retry after Retry-After seconds; GET /readyz reports the counters (Redis in cluster mode)'
  },
  INTERACTION_PREVIOUS_UNKNOWN: { status: 400, message: 'Unknown or unauthorized previous interaction' },
  INTERACTION_UNKNOWN_AGENT: {
    status: 400,
    message: (p) => `Unknown agent '${p.agentId}'`,
    hint: 'agentId names an agent that a loaded plugin contributes'
  },
  IDEMPOTENCY_KEY_INVALID: {
    status: 400,
    message: 'Invalid Idempotency-Key header: use 1 to 255 visible ASCII characters'
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 409,
    message: 'Idempotency-Key already used with a different request',
    hint: 'A retry resends the same body to the same route; a new request takes a new key'
  },
  /** A keyed create whose key another request holds (`record`): the store wrote nothing; the service retries. */
  IDEMPOTENCY_KEY_HELD: {
    status: 500,
    internal: true,
    message: (p) => `idempotency key held by interaction ${p.interactionId}`
  },
  /** A write that names an interaction the store does not hold (never saved, or deleted). */
  INTERACTION_NOT_STORED: { status: 500, internal: true, message: (p) => `interaction ${p.id} is not stored` },
  /** A `cursor` that no `list` of this store produced; the routes answer it with INVALID_QUERY. */
  INTERACTION_CURSOR_INVALID: {
    status: 500,
    internal: true,
    message: 'invalid list cursor: pass the nextCursor of the previous page unchanged'
  }
})
