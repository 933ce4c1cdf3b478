/**
 * The run and approval reads of a node that shares its runs through PostgreSQL: lists and reads
 * come from the shared table, so a run started on one node is read on any other. A decision is
 * recorded there first (the first decision wins, wherever it was made); the run's own node acts
 * on it: at once when the decision was made on it, else on a backplane signal to that node, or at
 * the latest at its next poll (once a second while it has approvals pending), so a signal lost
 * while Redis is down, or between nodes without cluster mode, delays a decision and never loses it.
 */
import type { Backplane } from '../contracts/index.js'
import type { Logger } from '../observability/index.js'
import type { PostgresWorkflowRunStore } from './postgres-workflow-runs.js'
import type { ApprovalInfo, WorkflowRunInfo } from './workflow-run.js'
import type { WorkflowRunReads, WorkflowRuns } from './workflow-runs.js'

export const DECISION_POLL_MS = 1000

/** The topic a node hears about decisions on its runs' approvals. */
export const decisionTopic = (node: string): string => `workflows/decided/${node}`

export class SharedRunReads implements WorkflowRunReads {
  private readonly poll: NodeJS.Timeout
  private readonly unsubscribe: () => void
  private checking = false
  /** A signal came while a check ran: check once more after it. */
  private again = false

  constructor(
    private readonly local: WorkflowRuns,
    private readonly store: PostgresWorkflowRunStore,
    private readonly backplane: Backplane,
    private readonly logger: Logger,
    pollMs = DECISION_POLL_MS
  ) {
    this.unsubscribe = backplane.subscribe(decisionTopic(backplane.node), () => void this.check())
    this.poll = setInterval(() => void this.check(), pollMs).unref()
  }

  list(limit: number): Promise<WorkflowRunInfo[]> {
    return this.store.list(limit)
  }

  get(runId: string): Promise<WorkflowRunInfo | undefined> {
    return this.store.get(runId)
  }

  approvals(): Promise<ApprovalInfo[]> {
    return this.store.approvals()
  }

  async decide(approvalId: string, approve: boolean): Promise<boolean> {
    const owner = await this.store.decide(approvalId, approve)
    if (owner === undefined) return false
    if (owner === this.backplane.node) this.local.decide(approvalId, approve)
    else this.backplane.publish(decisionTopic(owner), { approvalId })
    return true
  }

  /** Acts on the decisions other nodes recorded on this node's pending approvals. */
  private async check(): Promise<void> {
    if (this.checking) {
      this.again = true
      return
    }
    this.checking = true
    try {
      do {
        this.again = false
        const pending = this.local.approvals().map((a) => a.approvalId)
        if (pending.length === 0) return
        for (const [id, approve] of await this.store.decisions(pending)) this.local.decide(id, approve)
      } while (this.again)
    } catch (err) {
      this.logger.warn({ err }, 'workflow approvals: the decisions made on other nodes could not be read; retrying')
    } finally {
      this.checking = false
    }
  }

  close(): void {
    clearInterval(this.poll)
    this.unsubscribe()
  }
}
