/**
 * The leases of the A2A tasks this node runs, with a store several nodes share. Three times per
 * lease it renews every lease the node holds in one statement, and a task it no longer holds (ended
 * elsewhere: canceled, or ended as lost while this node was cut off) takes the end the store holds.
 * Twice per lease it ends the running tasks whose lease expired, those of a node killed or cut off,
 * and has their end told to their streams everywhere.
 */
import type { Logger } from 'pino'
import type { LostTask, TaskLeases } from './task-records.js'

/** What the keeper asks of the tasks of this node. */
export interface TaskLeaseHolder {
  /** The tasks this node runs whose end is not being written already. */
  running(): string[]
  /** This node no longer holds the task `id`: its run stops with the end the store holds. */
  lostHere(id: string): Promise<void>
  /** A task of a lost node that this node ended: its end is told. */
  ended(lost: LostTask): Promise<void>
}

export class TaskLeaseKeeper {
  private readonly timers: NodeJS.Timeout[]
  private renewing = false
  private sweeping = false

  constructor(
    private readonly leases: TaskLeases,
    private readonly holder: TaskLeaseHolder,
    private readonly logger: Logger
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
      this.logger.warn({ err }, 'A2A tasks: leases not renewed; retrying')
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
      this.logger.warn({ err }, 'A2A tasks: the sweep for lost nodes failed; retrying')
    } finally {
      this.sweeping = false
    }
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t)
  }
}
