/** The kill switch: installed disarmed; while armed it denies every admission, in both phases, with the arm reason. */
import {
  admit,
  deny,
  type GovernancePolicy,
  type PolicyContext,
  type PolicyDecision,
  type PolicyDescriptor
} from '../../contracts/index.js'

export const KILL_SWITCH_DEFAULT_NAME = 'kill-switch'
const ADMIT = admit()

/**
 * What the switch says about itself. `operator` is the label the arm request carried (the documented
 * body field, any string); `principal` is who the write gate authenticated, so a forged label
 * never hides who armed it.
 */
export interface KillSwitchState {
  armed: boolean
  reason?: string
  operator?: string
  principal?: string
  armedAt?: string
}

interface Armed {
  reason: string
  operator: string
  principal: string
  armedAt: string
  decision: PolicyDecision
}

export class KillSwitchPolicy implements GovernancePolicy {
  readonly className = 'KillSwitchPolicy'
  private armedState: Armed | null = null

  constructor(
    readonly name = KILL_SWITCH_DEFAULT_NAME,
    readonly source = 'code:KillSwitchPolicy',
    readonly version = '1'
  ) {}

  get armed(): boolean {
    return this.armedState !== null
  }

  /** `principal` defaults to the label for callers outside the write gate (code arming its own switch). */
  arm(reason: string, operator: string, principal = operator, armedAt = new Date().toISOString()): KillSwitchState {
    this.armedState = { reason, operator, principal, armedAt, decision: deny(reason) }
    return this.state()
  }

  disarm(): KillSwitchState {
    this.armedState = null
    return { armed: false }
  }

  /** Takes a state as `state()` gave it (a stored one, at start-up). */
  restore(s: KillSwitchState): void {
    if (!s.armed) this.disarm()
    else this.arm(s.reason ?? '', s.operator ?? '', s.principal ?? s.operator ?? '', s.armedAt)
  }

  state(): KillSwitchState {
    const s = this.armedState
    return s === null
      ? { armed: false }
      : { armed: true, reason: s.reason, operator: s.operator, principal: s.principal, armedAt: s.armedAt }
  }

  evaluate(_ctx: PolicyContext): PolicyDecision {
    return this.armedState === null ? ADMIT : this.armedState.decision
  }
}

export const killSwitchFactory = (d: PolicyDescriptor): GovernancePolicy =>
  new KillSwitchPolicy(d.name, d.source, d.version)
