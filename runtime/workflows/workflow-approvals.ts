/**
 * The approvals workflow runs wait for. A run that reaches an approval node parks here and its HTTP
 * request is answered at once; a decision (or the timeout, which denies) wakes the run again.
 */
import { randomBytes } from 'node:crypto'
import type { ApprovalInfo } from './workflow-run.js'

/** How an approval ended: `stopped` when the platform closed while it was pending. */
export type ApprovalOutcome = 'approved' | 'denied' | 'expired' | 'stopped'

interface Pending {
  approval: ApprovalInfo
  settle: (o: ApprovalOutcome) => void
  timer: NodeJS.Timeout
}

export class WorkflowApprovals {
  private readonly pending = new Map<string, Pending>()

  /** Parks an approval; the promise settles on the decision, the timeout or close. */
  request(
    a: Omit<ApprovalInfo, 'approvalId' | 'expiresAt'>,
    timeoutMs: number
  ): {
    approval: ApprovalInfo
    outcome: Promise<ApprovalOutcome>
  } {
    let approvalId: string
    do approvalId = 'apr_' + randomBytes(6).toString('hex')
    while (this.pending.has(approvalId))
    const approval: ApprovalInfo = {
      approvalId,
      ...a,
      expiresAt: new Date(Date.now() + timeoutMs).toISOString()
    }
    const outcome = new Promise<ApprovalOutcome>((resolve) => {
      const settle = (o: ApprovalOutcome): void => {
        const p = this.pending.get(approvalId)
        if (p === undefined) return
        clearTimeout(p.timer)
        this.pending.delete(approvalId)
        resolve(o)
      }
      // unref: a pending approval must not keep the process alive on shutdown
      const timer = setTimeout(() => settle('expired'), timeoutMs).unref()
      this.pending.set(approvalId, { approval, settle, timer })
    })
    return { approval, outcome }
  }

  /** Pending approvals, oldest first. */
  list(): ApprovalInfo[] {
    return [...this.pending.values()].map((p) => p.approval)
  }

  /** Decides a pending approval; false when none is pending under that id. */
  decide(approvalId: string, approve: boolean): boolean {
    const p = this.pending.get(approvalId)
    if (p === undefined) return false
    p.settle(approve ? 'approved' : 'denied')
    return true
  }

  /** Settles every pending approval as `stopped`. */
  close(): void {
    for (const p of [...this.pending.values()]) p.settle('stopped')
  }
}
