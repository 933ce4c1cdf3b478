import { defineErrors } from '../contracts/index.js'

/**
 * The configuration's codes: both are the operator's to fix, so the CLI prints the message on one
 * line and exits 78 (EX_CONFIG) instead of printing a stack.
 */
export const CONFIG_ERRORS = defineErrors({
  /** A key, value, flag or config file start-up cannot use; the message names the key and what it expects. */
  CONFIG_INVALID: { status: 500, operator: true, internal: true, message: (p) => String(p.detail) },
  /** Another mistake of the operator's making: a missing directory, an unreadable key file, a store it cannot open. */
  OPERATOR_MISTAKE: { status: 500, operator: true, internal: true, message: (p) => String(p.detail) }
})
