/**
 * The kill switches' state on LMDB, one record per switch name. An arm or disarm resolves only
 * once its record is committed, so a 200 means the state survives a crash; a switch that joins
 * the chain (at start-up, or from a reloaded policy file) takes its stored state, so an armed
 * switch stays armed across restarts until someone disarms it.
 *
 * Every record carries a version (when, and on which node, it was written), so the nodes of a
 * cluster, each keeping its own copy, agree on the newest whatever order the changes reach them.
 */
import type { Database } from 'lmdb'
import type { Logger } from 'pino'
import type { KillSwitchPolicy, KillSwitchState } from './types/index.js'

/** Orders the changes of one switch: the later write wins, the node id breaks a tie. */
export interface StateVersion {
  at: number
  node: string
}

/** A switch's state as kept and as sent to other nodes. Records from before versions have none. */
export interface KillSwitchRecord extends KillSwitchState {
  version?: StateVersion
}

/** True when `a` is newer than `b` (a record without a version is older than any with one). */
export function newer(a: StateVersion | undefined, b: StateVersion | undefined): boolean {
  if (a === undefined) return false
  if (b === undefined) return true
  return a.at > b.at || (a.at === b.at && a.node > b.node)
}

export class KillSwitchStates {
  /** Switches given their stored state already: a later chain change must not undo a newer arm. */
  private readonly restored = new WeakSet<KillSwitchPolicy>()
  private readonly listeners: ((name: string, record: KillSwitchRecord) => void)[] = []

  constructor(
    private readonly db: Database<KillSwitchRecord, string>,
    private readonly logger: Logger,
    /** This node, written into each version. */
    private readonly node = 'local',
    private readonly now: () => number = Date.now
  ) {}

  /** Called after each change made on this node is committed (the cluster sends it to the others). */
  onChange(fn: (name: string, record: KillSwitchRecord) => void): void {
    this.listeners.push(fn)
  }

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
    await this.commit(ks.name, state)
    return state
  }

  /** Disarms `ks` and resolves when the state is committed. */
  async disarm(ks: KillSwitchPolicy): Promise<KillSwitchState> {
    const state = ks.disarm()
    await this.commit(ks.name, state)
    return state
  }

  /** Every stored record by switch name (what a node tells a node that joins). */
  records(): Record<string, KillSwitchRecord> {
    const out: Record<string, KillSwitchRecord> = {}
    for (const { key, value } of this.db.getRange()) out[key] = value
    return out
  }

  /**
   * Takes a record another node wrote when it is newer than the one kept here: stored, then given
   * to the live switches of that name. Resolves true when it was taken.
   */
  async apply(name: string, record: KillSwitchRecord, live: readonly KillSwitchPolicy[]): Promise<boolean> {
    if (typeof record !== 'object' || record === null || !isVersion(record.version)) return false
    if (!newer(record.version, this.db.get(name)?.version)) return false
    const clean = cleanRecord(record)
    await this.db.put(name, clean)
    // a change made here while the write was committed is newer: it stays
    if (newer(this.db.get(name)?.version, clean.version)) return false
    for (const ks of live) {
      ks.restore(clean)
      this.restored.add(ks)
    }
    return true
  }

  private async commit(name: string, state: KillSwitchState): Promise<void> {
    // strictly after the last version kept, even with a clock set back: a change here supersedes it
    const last = this.db.get(name)?.version?.at ?? 0
    const record: KillSwitchRecord = { ...state, version: { at: Math.max(this.now(), last + 1), node: this.node } }
    await this.db.put(name, record)
    for (const fn of this.listeners) fn(name, record)
  }
}

function isVersion(v: unknown): v is StateVersion {
  const o = v as StateVersion | null | undefined
  return typeof o?.at === 'number' && Number.isFinite(o.at) && typeof o.node === 'string'
}

/** Only the fields of a state, typed as such: what came over the network is not trusted beyond them. */
function cleanRecord(r: KillSwitchRecord): KillSwitchRecord {
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
  const out: KillSwitchRecord = { armed: r.armed === true }
  if (out.armed) {
    out.reason = str(r.reason) ?? ''
    const operator = str(r.operator)
    const principal = str(r.principal)
    const armedAt = str(r.armedAt)
    if (operator !== undefined) out.operator = operator
    if (principal !== undefined) out.principal = principal
    if (armedAt !== undefined) out.armedAt = armedAt
  }
  if (r.version !== undefined) out.version = { at: r.version.at, node: r.version.node }
  return out
}
