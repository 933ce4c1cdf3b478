/**
 * The kill switches' state on LMDB, one record per switch name. An arm or disarm resolves only
 * once its record is committed, so a 200 means the state survives a crash; a switch that joins
 * the chain (at start-up, or from a reloaded policy file) takes its stored state, so an armed
 * switch stays armed across restarts until someone disarms it.
 */
import type { Database } from 'lmdb'
import type { Logger } from 'pino'
import type { KillSwitchPolicy, KillSwitchState } from './types/index.js'

export class KillSwitchStates {
  /** Switches given their stored state already: a later chain change must not undo a newer arm. */
  private readonly restored = new WeakSet<KillSwitchPolicy>()

  constructor(
    private readonly db: Database<KillSwitchState, string>,
    private readonly logger: Logger
  ) {}

  /** Gives each switch not seen before the state stored under its name, if any. */
  restore(switches: readonly KillSwitchPolicy[]): void {
    for (const ks of switches) {
      if (this.restored.has(ks)) continue
      this.restored.add(ks)
      const s = this.db.get(ks.name)
      if (s === undefined) continue
      ks.restore(s)
      if (s.armed)
        this.logger.warn(
          { policy: ks.name, reason: s.reason, operator: s.operator, principal: s.principal, armedAt: s.armedAt },
          `governance kill switch '${ks.name}' is still armed (armed by ${s.principal ?? '?'} at ${s.armedAt ?? '?'}): ${s.reason ?? ''}`
        )
    }
  }

  /** Arms `ks` at once (denying from now on) and resolves when the state is committed. */
  async arm(ks: KillSwitchPolicy, reason: string, operator: string, principal: string): Promise<KillSwitchState> {
    const state = ks.arm(reason, operator, principal)
    await this.db.put(ks.name, state)
    return state
  }

  /** Disarms `ks` and resolves when the state is committed. */
  async disarm(ks: KillSwitchPolicy): Promise<KillSwitchState> {
    const state = ks.disarm()
    await this.db.put(ks.name, state)
    return state
  }
}
