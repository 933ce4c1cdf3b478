import { OperatorError } from '../config/index.js'
import { defineErrors } from '../contracts/index.js'

/** A policy document or entry that cannot be loaded; the message names the source and entry. */
export class PolicyLoadError extends OperatorError {
  constructor(message: string) {
    super(message)
    this.name = 'PolicyLoadError'
  }
}

/** A built-in type's `config:` block is wrong; the loader wraps it with the entry's name. */
export class PolicyConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PolicyConfigError'
  }
}

/**
 * The governance area's REST codes: the controller, the kill switch and policy reloads.
 */
export const GOVERNANCE_ERRORS = defineErrors({
  GOVERNANCE_NOT_INSTALLED: {
    status: 503,
    message: 'governance controller not installed',
    hint: 'Set platform.ai.governance.enabled=true'
  },
  GOVERNANCE_NO_KILL_SWITCH: {
    status: 409,
    message: 'no KillSwitchPolicy installed on this framework',
    hint: 'Add a policy of type kill-switch to a policy file or set platform.ai.governance.kill-switch.enabled=true'
  },
  GOVERNANCE_REASON_BLANK: { status: 400, message: 'reason must not be blank' },
  RELOAD_SWAP_NAME_BLANK: { status: 400, message: 'swapName must not be blank' },
  RELOAD_CONTENT_BLANK: { status: 400, message: 'policy content must not be blank' },
  RELOAD_UNKNOWN_SWAP: { status: 400, message: (p) => String(p.detail) },
  RELOAD_UNKNOWN_FORMAT: { status: 400, message: (p) => String(p.detail) },
  RELOAD_PARSE_FAILED: { status: 400, message: (p) => String(p.detail) },
  RELOAD_EMPTY: { status: 400, message: (p) => String(p.detail) }
})
