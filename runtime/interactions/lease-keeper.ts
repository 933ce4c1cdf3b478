import type { Backplane } from '../contracts/index.js'
import type { Logger } from '../observability/index.js'
import type { StepFeed } from './feed.js'
import type { RunLeases } from './types.js'

/** What the keeper asks of the runs of this node. */
export interface LeaseHolder {
  /** The stored runs in flight here whose outcome is not decided yet: their leases are renewed. */
  leasedRuns(): string[]
  /** Whether the run `id` is in flight on this node. */
  runsHere(id: string): boolean
  /** A cancel of the run `id` persisted by some node: stop it as a local cancel would. */
  cancelHere(id: string): void
  /** This node lost the run `id` (ended, deleted or taken elsewhere): stop it without writing. */
  lostHere(id: string): void
}

export interface LeaseKeeperOptions {
  leases: RunLeases
  feed: StepFeed
  /** Cluster mode's backplane; without it a cancel reaches the owner at its next renewal only. */
  backplane: Backplane | undefined
  node: string
  leaseMs: number
  holder: LeaseHolder
  logger: Logger
}

/** The backplane topic on which a node hears of cancels of its runs made on other nodes. */
export const cancelTopic = (node: string): string => `interactions/cancel/${node}`

/**
 * Keeps the leases of this node's runs and ends the runs of lost nodes. Three times per lease it
 * renews every lease this node holds in one statement (learning of runs it lost and of cancels
 * asked for meanwhile); twice per lease it sweeps the store for expired leases, ending those runs
 * FAILED `interrupted: node lost` and telling their viewers everywhere. A cancel on another node
 * is persisted on the run's row and signalled over the backplane to its owner; the renewal finds
 * the persisted cancel if the signal is lost.
 */
export class LeaseKeeper {
  private readonly timers: NodeJS.Timeout[] = []
  private readonly unsubscribe: (() => void) | undefined
  private renewing = false
  private sweeping = false
  private stopped = false

  constructor(private readonly opts: LeaseKeeperOptions) {
    this.unsubscribe = opts.backplane?.subscribe(cancelTopic(opts.node), (data) => {
      const id = (data as { id?: unknown } | null)?.id
      if (typeof id === 'string') opts.holder.cancelHere(id)
    })
    // unref'd: a lease never keeps a process alive
    this.timers.push(setInterval(() => void this.renew(), Math.max(1, Math.floor(opts.leaseMs / 3))).unref())
    this.timers.push(setInterval(() => void this.sweep(), Math.max(1, Math.floor(opts.leaseMs / 2))).unref())
  }

  /**
   * Persists a cancel of another node's run of `owner` and signals its node; false when no such
   * run is live anywhere.
   */
  async requestCancel(owner: string, id: string): Promise<boolean> {
    const node = await this.opts.leases.requestCancel(id, owner)
    if (node === undefined) return false
    if (node === this.opts.node) this.opts.holder.cancelHere(id)
    else if (node !== '') this.opts.backplane?.publish(cancelTopic(node), { id })
    return true
  }

  /** Extends this node's leases; stops the runs it lost and cancels those a cancel was persisted for. */
  async renew(): Promise<void> {
    if (this.renewing || this.stopped) return
    this.renewing = true
    try {
      const { lost, cancelled } = await this.opts.leases.renew(this.opts.holder.leasedRuns())
      for (const id of lost) this.opts.holder.lostHere(id)
      for (const id of cancelled) this.opts.holder.cancelHere(id)
    } catch (err) {
      // a store closing under a last renewal is no news
      if (!this.stopped) this.opts.logger.warn({ err }, 'interactions: leases not renewed; retrying')
    } finally {
      this.renewing = false
    }
  }

  /**
   * Ends the runs of lost nodes, and tells this node's viewers of another node's run that has
   * ended when they may have missed it (a message lost while the backplane was down, or sent
   * before their subscription took effect): the store is the truth, the backplane only fast.
   */
  async sweep(): Promise<void> {
    if (this.sweeping || this.stopped) return
    this.sweeping = true
    try {
      const ended = await this.opts.leases.sweep()
      for (const h of ended) {
        this.opts.logger.warn({ interaction: h.id }, 'interaction of a lost node marked FAILED')
        this.opts.feed.publishTerminal(h)
      }
      const elsewhere = this.opts.feed.watchedIds().filter((id) => !this.opts.holder.runsHere(id))
      for (const h of await this.opts.leases.ended(elsewhere)) this.opts.feed.deliverTerminal(h)
    } catch (err) {
      if (!this.stopped) this.opts.logger.warn({ err }, 'interactions: the sweep for lost nodes failed; retrying')
    } finally {
      this.sweeping = false
    }
  }

  stop(): void {
    this.stopped = true
    for (const t of this.timers) clearInterval(t)
    this.unsubscribe?.()
  }
}
