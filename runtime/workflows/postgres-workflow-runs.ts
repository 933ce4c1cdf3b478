/**
 * Workflow run records in PostgreSQL, for every node to read: the node running a run writes its
 * record at each change (`RunMirror`); any node lists and reads runs and their pending approvals,
 * and records a decision on an approval, which the run's own node then acts on.
 */
import type { Logger } from '../observability/index.js'
import { textFits, type PostgresDb } from '../store/index.js'
import type { ApprovalInfo, WorkflowRunInfo } from './workflow-run.js'
import type { RunMirror } from './workflow-runs.js'

/** The schema, one entry per version (`PostgresDb.migrate`). */
export const WORKFLOW_RUN_MIGRATIONS: readonly string[] = [
  `CREATE TABLE platform_workflow_runs (
     run_id text COLLATE "C" PRIMARY KEY,
     seq bigserial NOT NULL,
     node text COLLATE "C" NOT NULL,
     ended boolean NOT NULL,
     approval_id text COLLATE "C",
     decision boolean,
     run json NOT NULL
   );
   CREATE INDEX platform_workflow_runs_newest ON platform_workflow_runs (seq);
   CREATE UNIQUE INDEX platform_workflow_runs_approval ON platform_workflow_runs (approval_id)
     WHERE approval_id IS NOT NULL;
   CREATE INDEX platform_workflow_runs_live ON platform_workflow_runs (node) WHERE NOT ended;`
]

/** What a restart leaves of a run its node was driving: it cannot go on, so it ended. */
export const INTERRUPTED = 'not run: the node running the workflow restarted'

export class PostgresWorkflowRunStore implements RunMirror {
  constructor(
    private readonly db: PostgresDb,
    /** This node: the owner written on the runs it starts. */
    private readonly node: string,
    /** Ended runs kept (the newest); runs still going are always kept. */
    private readonly maxRuns: number,
    private readonly logger: Logger
  ) {}

  /**
   * Creates or migrates the table, then ends the runs this node left going when it stopped (a
   * record nothing will change again); resolves to how many.
   */
  async start(): Promise<number> {
    await this.db.migrate('workflow-runs', WORKFLOW_RUN_MIGRATIONS)
    const { rows } = await this.db.query<{ run: WorkflowRunInfo }>(
      'SELECT run FROM platform_workflow_runs WHERE node = $1 AND NOT ended',
      [this.node]
    )
    for (const { run } of rows) {
      const waiting = run.nodeResults.find((r) => r.status === 'WAITING_APPROVAL')
      if (waiting !== undefined) Object.assign(waiting, { status: 'FAILED', error: INTERRUPTED })
      await this.put({ ...run, status: 'FAILED', pendingApproval: null, completedAt: new Date().toISOString() })
    }
    return rows.length
  }

  async write(run: WorkflowRunInfo): Promise<void> {
    try {
      await this.put(run)
    } catch (err) {
      this.logger.error({ err, runId: run.runId }, 'workflow run: its record could not be shared with the other nodes')
    }
  }

  /** Inserts or replaces the record; a new approval clears any earlier decision. */
  private async put(run: WorkflowRunInfo): Promise<void> {
    const { rows } = await this.db.query<{ inserted: boolean }>(
      `INSERT INTO platform_workflow_runs (run_id, node, ended, approval_id, run) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (run_id) DO UPDATE SET ended = excluded.ended, approval_id = excluded.approval_id,
         decision = CASE WHEN platform_workflow_runs.approval_id IS NOT DISTINCT FROM excluded.approval_id
                         THEN platform_workflow_runs.decision END,
         run = excluded.run
       RETURNING (xmax = 0) AS inserted`,
      [run.runId, this.node, run.completedAt !== null, run.pendingApproval?.approvalId ?? null, JSON.stringify(run)]
    )
    // a new run: the ended ones beyond the window go
    if (rows[0]?.inserted === true)
      await this.db.query(
        `DELETE FROM platform_workflow_runs WHERE run_id IN (
           SELECT run_id FROM platform_workflow_runs WHERE ended ORDER BY seq DESC OFFSET $1)`,
        [this.maxRuns]
      )
  }

  /** Every node's runs, newest first, at most `limit`. */
  async list(limit: number): Promise<WorkflowRunInfo[]> {
    const { rows } = await this.db.query<{ run: WorkflowRunInfo }>(
      'SELECT run FROM platform_workflow_runs ORDER BY seq DESC LIMIT $1',
      [limit]
    )
    return rows.map((r) => r.run)
  }

  async get(runId: string): Promise<WorkflowRunInfo | undefined> {
    if (!textFits(runId)) return undefined
    const { rows } = await this.db.query<{ run: WorkflowRunInfo }>(
      'SELECT run FROM platform_workflow_runs WHERE run_id = $1',
      [runId]
    )
    return rows[0]?.run
  }

  /**
   * Every node's approvals nobody decided yet and that have not expired, oldest run first (the
   * clock that expires one is its own node's: one whose node is lost drops out at its expiry).
   */
  async approvals(now = Date.now()): Promise<ApprovalInfo[]> {
    const { rows } = await this.db.query<{ run: WorkflowRunInfo }>(
      `SELECT run FROM platform_workflow_runs
        WHERE approval_id IS NOT NULL AND decision IS NULL AND NOT ended ORDER BY seq`
    )
    return rows
      .map((r) => r.run.pendingApproval)
      .filter((a): a is ApprovalInfo => a !== null && Date.parse(a.expiresAt) > now)
  }

  /**
   * Records a decision on a pending approval, once: the first decision wins. Resolves to the node
   * whose run waits for it, or undefined when no run waits for that id undecided.
   */
  async decide(approvalId: string, approve: boolean): Promise<string | undefined> {
    if (!textFits(approvalId)) return undefined
    const { rows } = await this.db.query<{ node: string }>(
      `UPDATE platform_workflow_runs SET decision = $2
        WHERE approval_id = $1 AND decision IS NULL AND NOT ended RETURNING node`,
      [approvalId, approve]
    )
    return rows[0]?.node
  }

  /** The decisions recorded on these approvals of this node's runs. */
  async decisions(approvalIds: string[]): Promise<Map<string, boolean>> {
    if (approvalIds.length === 0) return new Map()
    const { rows } = await this.db.query<{ approval_id: string; decision: boolean }>(
      `SELECT approval_id, decision FROM platform_workflow_runs
        WHERE approval_id = ANY($1) AND node = $2 AND decision IS NOT NULL`,
      [approvalIds, this.node]
    )
    return new Map(rows.map((r) => [r.approval_id, r.decision]))
  }
}
