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

export interface KillSwitchState {
  armed: boolean
  reason?: string
  operator?: string
  armedAt?: string
}

export class KillSwitchPolicy implements GovernancePolicy {
  readonly className = 'KillSwitchPolicy'
  private armedState: { reason: string; operator: string; armedAt: string; decision: PolicyDecision } | null = null

  constructor(
    readonly name = KILL_SWITCH_DEFAULT_NAME,
    readonly source = 'code:KillSwitchPolicy',
    readonly version = '1'
  ) {}

  get armed(): boolean {
    return this.armedState !== null
  }

  arm(reason: string, operator: string): KillSwitchState {
    this.armedState = { reason, operator, armedAt: new Date().toISOString(), decision: deny(reason) }
    return this.state()
  }

  disarm(): KillSwitchState {
    this.armedState = null
    return { armed: false }
  }

  state(): KillSwitchState {
    const s = this.armedState
    return s === null ? { armed: false } : { armed: true, reason: s.reason, operator: s.operator, armedAt: s.armedAt }
  }

  evaluate(_ctx: PolicyContext): PolicyDecision {
    return this.armedState === null ? ADMIT : this.armedState.decision
  }
}

export const killSwitchFactory = (d: PolicyDescriptor): GovernancePolicy =>
  new KillSwitchPolicy(d.name, d.source, d.version)
