import { defineErrors } from '../contracts/index.js'

/**
 * The governance area's codes: the controller, the kill switch, policy reloads (REST), and the
 * failures of loading policies and signing commitments, which never reach a client as such.
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
  RELOAD_EMPTY: { status: 400, message: (p) => String(p.detail) },
  /** A policy document or entry that cannot be loaded, naming the source and entry; the operator fixes it. */
  POLICY_LOAD_FAILED: { status: 500, internal: true, operator: true, message: (p) => String(p.detail) },
  /** A built-in type's `config:` block is wrong; the loader wraps it with the entry's name. */
  POLICY_CONFIG_INVALID: { status: 500, internal: true, message: (p) => String(p.detail) },
  /** A policy threw (or rejected): the message becomes the deny reason, so the gate fails closed. */
  POLICY_THREW: { status: 500, internal: true, message: (p) => String(p.detail) },
  /** A commitment input or stored record that is not one: the message names the member. */
  COMMITMENT_INVALID: { status: 500, internal: true, message: (p) => String(p.detail) }
})
