/**
 * The leases of the tasks this node runs (A2A or MCP), with a store several nodes share. Three
 * times per lease it renews every lease the node holds in one statement, and a task it no longer
 * holds (ended elsewhere: canceled, or ended as lost while this node was cut off) takes the end the
 * store holds. Twice per lease it ends the running tasks whose lease expired, those of a node
 * killed or cut off, and has their end told to whoever watches them.
 */

/** A store's leases of running tasks; `L` is what it says of a task of a lost node it ended. */
export interface LeasedTasks<L> {
  readonly leaseMs: number
  /** Extends this node's leases of `ids`; answers those it no longer holds (the task ended elsewhere). */
  renew(ids: readonly string[]): Promise<string[]>
  /** Ends the running tasks whose lease expired, each once whichever nodes ask at the same time. */
  endLost(now: number): Promise<L[]>
}

/** What the keeper asks of the tasks of this node. */
export interface TaskLeaseHolder<L> {
  /** The tasks this node runs whose end is not being written already. */
  running(): string[]
  /** This node no longer holds the task `id`: its run stops with the end the store holds. */
  lostHere(id: string): Promise<void>
  /** A task of a lost node that this node ended: its end is told. */
  ended(lost: L): Promise<void>
}

export class TaskLeaseKeeper<L> {
  private readonly timers: NodeJS.Timeout[]
  private renewing = false
  private sweeping = false

  /** `warn` hears a renewal or sweep that failed (`what`); the next round retries it. */
  constructor(
    private readonly leases: LeasedTasks<L>,
    private readonly holder: TaskLeaseHolder<L>,
    private readonly warn: (err: unknown, what: string) => void
  ) {
    // unref'd: a lease never keeps a process alive
    this.timers = [
      setInterval(() => void this.renew(), Math.max(1, Math.floor(leases.leaseMs / 3))).unref(),
      setInterval(() => void this.sweep(), Math.max(1, Math.floor(leases.leaseMs / 2))).unref()
    ]
  }

  private async renew(): Promise<void> {
    const ids = this.holder.running()
    if (this.renewing || ids.length === 0) return
    this.renewing = true
    try {
      for (const id of await this.leases.renew(ids)) await this.holder.lostHere(id)
    } catch (err) {
      this.warn(err, 'leases not renewed')
    } finally {
      this.renewing = false
    }
  }

  private async sweep(): Promise<void> {
    if (this.sweeping) return
    this.sweeping = true
    try {
      for (const lost of await this.leases.endLost(Date.now())) await this.holder.ended(lost)
    } catch (err) {
      this.warn(err, 'the sweep for lost nodes failed')
    } finally {
      this.sweeping = false
    }
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t)
  }
}
