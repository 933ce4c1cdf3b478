/**
 * Workflow runs: starts them on a coordinator, keeps the last `maxRuns` in memory (a bounded
 * window, lost on restart), and holds the approvals they wait for. With a mirror (the Postgres
 * store of runs), every change of a run record is also written where every node reads it. The
 * run and approval routes read a `WorkflowRunReads`: this node's runs, or every node's.
 */
import { randomUUID } from 'node:crypto'
import { PlatformError } from '../contracts/index.js'
import { newCoordinationId, type FleetDispatcher } from '../fleet/index.js'
import type { Platform } from '../platform.js'
import { WorkflowApprovals } from './workflow-approvals.js'
import { graphOf, notRunnable } from './workflow-graph.js'
import type { WorkflowManifest } from './workflow-manifest.js'
import type { ApprovalInfo, WorkflowRunInfo } from './workflow-run.js'
import { WorkflowRunner } from './workflow-runner.js'
import { WORKFLOWS_ERRORS } from './errors.js'

export const DEFAULT_MAX_RUNS = 500

/** Where the run records go beside this node's window, for the other nodes to read. */
export interface RunMirror {
  /** Keeps `run` (a copy); one run's writes land in call order. Never rejects: a failure is logged. */
  write(run: WorkflowRunInfo): Promise<void>
}

/** What the run and approval routes read: this node's runs, or every node's (`SharedRunReads`). */
export interface WorkflowRunReads {
  /** Newest first, at most `limit`. */
  list(limit: number): Promise<WorkflowRunInfo[]>
  get(runId: string): Promise<WorkflowRunInfo | undefined>
  /** Pending approvals, oldest first. */
  approvals(): Promise<ApprovalInfo[]>
  /** Decides a pending approval; false when none is pending under that id. */
  decide(approvalId: string, approve: boolean): Promise<boolean>
}

/** The reads of this node's own runs: a single node, or runs kept nowhere else. */
export function localRunReads(runs: WorkflowRuns): WorkflowRunReads {
  return {
    list: async (limit) => runs.list().slice(0, limit),
    get: async (runId) => runs.get(runId),
    approvals: async () => runs.approvals(),
    decide: async (approvalId, approve) => runs.decide(approvalId, approve)
  }
}

/** Queues a journal event of a run's own coordination; returns its id, for the events under it. */
export type RunJournal = (
  coordinationId: string,
  parentEventId: string | null,
  type: 'CoordinationStarted' | 'CoordinationCompleted',
  fields: Record<string, unknown>
) => string

/** The run's text input: a string as is, nothing as "", anything else as JSON. */
function inputText(input: unknown): string {
  if (typeof input === 'string') return input
  if (input === undefined || input === null) return ''
  return JSON.stringify(input)
}

function copy(run: WorkflowRunInfo): WorkflowRunInfo {
  return structuredClone(run)
}

export class WorkflowRuns {
  readonly approvalGate = new WorkflowApprovals()
  // insertion order is start order: the oldest first
  private readonly runs = new Map<string, WorkflowRunInfo>()
  private readonly active = new Set<Promise<unknown>>()
  // aborted on close: calls in flight are cancelled and no further node starts
  private readonly stopping = new AbortController()

  constructor(
    private readonly dispatcher: FleetDispatcher,
    private readonly onFault: (err: unknown, run: WorkflowRunInfo) => void,
    private readonly maxRuns = DEFAULT_MAX_RUNS,
    /** Where a run's own CoordinationStarted / CoordinationCompleted go, its dispatches under them. */
    private readonly journal?: RunJournal,
    private readonly mirror?: RunMirror
  ) {
    if (!Number.isInteger(maxRuns) || maxRuns < 1) throw new RangeError('maxRuns must be a positive integer')
  }

  /**
   * Starts `w` (WORKFLOW_NOT_RUNNABLE when it cannot run, WORKFLOW_RUNS_FULL when every kept run is
   * still going) and resolves with a copy of the run once it ended or waits for an approval.
   */
  start(w: WorkflowManifest, coordinator: string, input: unknown, principal: string): Promise<WorkflowRunInfo> {
    const g = graphOf(w)
    if (this.stopping.signal.aborted) throw notRunnable('the platform is stopping')
    this.makeRoom()
    const run: WorkflowRunInfo = {
      runId: 'run-' + randomUUID(),
      workflowId: w.id,
      coordinator,
      coordinationId: newCoordinationId(),
      status: 'RUNNING',
      nodeResults: [],
      output: '',
      pendingApproval: null,
      startedAt: new Date().toISOString(),
      completedAt: null
    }
    this.runs.set(run.runId, run)
    // the mirror's writes of this run, in order; the caller is answered once they are in
    let written: Promise<void> = Promise.resolve()
    const changed = (): void => {
      const mirror = this.mirror
      if (mirror === undefined) return
      const snapshot = copy(run)
      written = written.then(() => mirror.write(snapshot))
    }
    changed()
    const t0 = performance.now()
    const root =
      this.journal?.(run.coordinationId, null, 'CoordinationStarted', {
        coordinatorName: coordinator,
        workflowId: w.id,
        runId: run.runId
      }) ?? null
    return new Promise((resolve) => {
      const runner = new WorkflowRunner(
        g,
        run,
        {
          coordinationId: run.coordinationId,
          coordinator,
          principal,
          parentEventId: root,
          signal: this.stopping.signal
        },
        {
          dispatcher: this.dispatcher,
          approvals: this.approvalGate,
          onChange: changed,
          onWaiting: () => {
            const parked = copy(run)
            void written.then(() => resolve(parked))
          }
        }
      )
      const going = runner.execute(inputText(input)).then(async (fault) => {
        if (fault !== undefined) this.onFault(fault, run)
        if (root !== null)
          this.journal?.(run.coordinationId, root, 'CoordinationCompleted', {
            totalDurationMs: Math.round(performance.now() - t0),
            agentCallCount: run.nodeResults.filter((r) => r.type === 'agent' && r.status !== 'SKIPPED').length
          })
        await written
        resolve(copy(run))
      })
      this.active.add(going)
      void going.finally(() => this.active.delete(going))
    })
  }

  /** Drops the oldest ended run when the window is full; refuses when none has ended. */
  private makeRoom(): void {
    if (this.runs.size < this.maxRuns) return
    for (const [id, r] of this.runs)
      if (r.completedAt !== null) {
        this.runs.delete(id)
        return
      }
    throw new PlatformError(WORKFLOWS_ERRORS.WORKFLOW_RUNS_FULL, { limit: this.maxRuns })
  }

  /** Newest first. */
  list(): WorkflowRunInfo[] {
    return [...this.runs.values()].reverse().map(copy)
  }

  get(runId: string): WorkflowRunInfo | undefined {
    const r = this.runs.get(runId)
    return r === undefined ? undefined : copy(r)
  }

  approvals(): ApprovalInfo[] {
    return this.approvalGate.list()
  }

  decide(approvalId: string, approve: boolean): boolean {
    return this.approvalGate.decide(approvalId, approve)
  }

  /** Denies what is pending (`stopped`) and waits for the runs to end. */
  async close(): Promise<void> {
    this.stopping.abort()
    this.approvalGate.close()
    await Promise.all([...this.active])
  }
}

/** The platform's workflow runs over `dispatcher`, journalled: faults logged, pending approvals denied on close. */
export function platformWorkflowRuns(
  platform: Platform,
  dispatcher: FleetDispatcher,
  journal: RunJournal,
  mirror?: RunMirror
): WorkflowRuns {
  const runs = new WorkflowRuns(
    dispatcher,
    (err, run) => {
      platform.logger.error({ err, runId: run.runId, workflow: run.workflowId }, 'workflow run failed')
    },
    DEFAULT_MAX_RUNS,
    journal,
    mirror
  )
  platform.onClose(() => runs.close())
  return runs
}
