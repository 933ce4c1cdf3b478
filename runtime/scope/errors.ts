import { defineErrors } from '../contracts/index.js'

/**
 * The scope area's codes. Both are internal: a bad scope declaration stops the policy file or
 * plugin that holds it from loading, and a failed embedding becomes a tier's degrade or ERROR.
 */
export const SCOPE_ERRORS = defineErrors({
  /** A scope declaration that cannot be used; raised when a policy file or plugin is loaded. */
  SCOPE_CONFIG_INVALID: { status: 500, internal: true, message: (p) => String(p.detail) },
  /** An embedding call that failed: `embedder`, and `reason` (timeout, capacity, error, unparseable, invalid). */
  EMBEDDER_FAILED: { status: 500, internal: true, message: (p) => String(p.detail) }
})
