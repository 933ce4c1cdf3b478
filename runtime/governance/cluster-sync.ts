/**
 * Governance across the nodes of a cluster, over the backplane. A kill switch armed or disarmed
 * on one node, a policy reloaded through the admin API, and a policy file seen changing on one
 * node reach every other node at once (one pub/sub message). Pub/sub keeps nothing, so a node
 * that joins, or gets Redis back after an outage, asks the others what it missed: it sends what
 * it holds, and whoever holds something newer answers with it. Each kill-switch state is stored
 * by every node (its own LMDB) with a version, so a node restarted alone keeps the last state it
 * knew and the newest version wins wherever the changes meet.
 */
import type { Logger } from 'pino'
import type { Backplane } from '../contracts/index.js'
import { newer, type KillSwitchRecord, type KillSwitchStates, type StateVersion } from './kill-switch-states.js'
import type { GovernanceService } from './service.js'

export const GOVERNANCE_TOPICS = {
  killSwitch: 'governance.kill-switch',
  reload: 'governance.reload',
  policyFile: 'governance.policy-file',
  sync: 'governance.sync'
} as const

/** A reload made through the admin API, kept so that a node joining later makes it too. */
interface ReloadRecord {
  swapName: string
  content: string
  format: string
  version: StateVersion
}

/** `ask`: what the sender holds, sent when it joins; `answer`: what the sender holds newer than the asker. */
interface SyncMessage {
  kind: 'ask' | 'answer'
  to?: string
  killSwitches: Record<string, KillSwitchRecord>
  reloads: Record<string, ReloadRecord>
}

/** How many times a joining node asks (a second apart) before it concludes nobody holds anything newer. */
const ASKS = 3

export interface GovernanceSyncOptions {
  backplane: Backplane
  service: GovernanceService
  states: KillSwitchStates
  logger: Logger
  /** How often the backplane's availability is looked at (milliseconds, default 1000). */
  checkMs?: number
  now?: () => number
}

export class GovernanceSync {
  private readonly reloads = new Map<string, ReloadRecord>()
  private readonly offs: (() => void)[] = []
  private timer: NodeJS.Timeout | undefined
  private wasAvailable = false
  private asksLeft = 0
  private readonly now: () => number
  private readonly bp: Backplane
  private readonly log: Logger

  constructor(private readonly opts: GovernanceSyncOptions) {
    this.now = opts.now ?? Date.now
    this.bp = opts.backplane
    this.log = opts.logger
  }

  start(): void {
    const { service, states } = this.opts
    const on = (topic: string, fn: (data: unknown, from: string) => void): void => {
      this.offs.push(this.bp.subscribe(topic, fn))
    }
    on(GOVERNANCE_TOPICS.killSwitch, (d, from) => {
      const m = d as { name?: unknown; record?: unknown } | null
      if (typeof m?.name === 'string') void this.takeKillSwitch(m.name, m.record as KillSwitchRecord, from)
    })
    on(GOVERNANCE_TOPICS.reload, (d, from) => {
      this.takeReload(d as ReloadRecord, from)
    })
    on(GOVERNANCE_TOPICS.policyFile, (d, from) => {
      this.takePolicyFile(d as { file?: unknown; digest?: unknown }, from)
    })
    on(GOVERNANCE_TOPICS.sync, (d, from) => {
      void this.takeSync(d as SyncMessage, from)
    })
    states.onChange((name, record) => {
      this.bp.publish(GOVERNANCE_TOPICS.killSwitch, { name, record })
    })
    service.onReload((swapName, content, format) => {
      const prev = this.reloads.get(swapName)?.version.at ?? 0
      const r: ReloadRecord = {
        swapName,
        content,
        format,
        version: { at: Math.max(this.now(), prev + 1), node: this.bp.node }
      }
      this.reloads.set(swapName, r)
      this.bp.publish(GOVERNANCE_TOPICS.reload, r)
    })
    service.files.onChange((file, digest) => {
      this.bp.publish(GOVERNANCE_TOPICS.policyFile, { file, digest })
    })
    this.timer = setInterval(() => this.tick(), this.opts.checkMs ?? 1000)
    this.timer.unref()
    this.tick()
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    for (const off of this.offs.splice(0)) off()
  }

  /** On joining, and on getting the backplane back, asks the other nodes what changed meanwhile. */
  private tick(): void {
    const up = this.bp.available()
    if (up && !this.wasAvailable) this.asksLeft = ASKS
    this.wasAvailable = up
    if (!up || this.asksLeft <= 0) return
    this.asksLeft--
    this.bp.publish(GOVERNANCE_TOPICS.sync, {
      kind: 'ask',
      killSwitches: this.opts.states.records(),
      reloads: Object.fromEntries(this.reloads)
    } satisfies SyncMessage)
  }

  private async takeSync(m: SyncMessage, from: string): Promise<void> {
    if (typeof m !== 'object' || m === null || (m.kind !== 'ask' && m.kind !== 'answer')) return
    if (m.kind === 'answer' && m.to !== this.bp.node) return
    // heard: another node is there and holds something newer, so asking again is not needed
    if (m.kind === 'answer') this.asksLeft = 0
    const theirSwitches = (isRecord(m.killSwitches) ? m.killSwitches : {}) as Partial<Record<string, KillSwitchRecord>>
    const theirReloads = (isRecord(m.reloads) ? m.reloads : {}) as Partial<Record<string, ReloadRecord>>
    for (const [name, record] of Object.entries(theirSwitches))
      if (record !== undefined) await this.takeKillSwitch(name, record, from)
    for (const r of Object.values(theirReloads)) if (r !== undefined) this.takeReload(r, from)
    if (m.kind !== 'ask') return
    const killSwitches: Record<string, KillSwitchRecord> = {}
    for (const [name, mine] of Object.entries(this.opts.states.records()))
      if (newer(mine.version, theirSwitches[name]?.version)) killSwitches[name] = mine
    const reloads: Record<string, ReloadRecord> = {}
    for (const [name, mine] of this.reloads) if (newer(mine.version, theirReloads[name]?.version)) reloads[name] = mine
    if (Object.keys(killSwitches).length === 0 && Object.keys(reloads).length === 0) return
    this.bp.publish(GOVERNANCE_TOPICS.sync, { kind: 'answer', to: from, killSwitches, reloads } satisfies SyncMessage)
  }

  private async takeKillSwitch(name: string, record: KillSwitchRecord, from: string): Promise<void> {
    const { service, states } = this.opts
    const live = service.chain.killSwitches.filter((k) => k.name === name)
    let taken: boolean
    try {
      taken = await states.apply(name, record, live)
    } catch (err) {
      this.log.error(
        { err, policy: name, from },
        `governance kill switch '${name}': a change from node ${from} could not be stored`
      )
      return
    }
    if (!taken) return
    if (record.armed)
      this.log.warn(
        { policy: name, from, principal: record.principal, reason: record.reason },
        `governance kill switch '${name}' armed on node ${from} by ${record.principal ?? '?'}: ${record.reason ?? ''}`
      )
    else this.log.warn({ policy: name, from }, `governance kill switch '${name}' disarmed on node ${from}`)
  }

  private takeReload(r: ReloadRecord, from: string): void {
    if (
      typeof r?.swapName !== 'string' ||
      typeof r.content !== 'string' ||
      typeof r.format !== 'string' ||
      typeof r.version?.at !== 'number' ||
      typeof r.version.node !== 'string'
    )
      return
    if (!newer(r.version, this.reloads.get(r.swapName)?.version)) return
    this.reloads.set(r.swapName, { swapName: r.swapName, content: r.content, format: r.format, version: r.version })
    try {
      this.opts.service.reload(r.swapName, r.content, r.format, true)
    } catch (err) {
      this.log.error(
        { swapName: r.swapName, from, err: (err as Error).message },
        `governance reload of '${r.swapName}' made on node ${from} does not apply on this node: ${(err as Error).message}`
      )
    }
  }

  private takePolicyFile(m: { file?: unknown; digest?: unknown }, from: string): void {
    if (typeof m?.file !== 'string' || typeof m.digest !== 'string') return
    const files = this.opts.service.files
    const file = m.file
    if (files.digest(file) === undefined) {
      this.log.warn({ file, from }, `node ${from} serves policy file ${file}, which this node does not load`)
      return
    }
    if (files.digest(file) === m.digest) return
    files.reload(file, undefined, true)
    if (files.digest(file) !== m.digest)
      this.log.warn(
        { file, from },
        `policy file ${file} on this node differs from node ${from}'s copy: deploy the same policy files to every node`
      )
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
