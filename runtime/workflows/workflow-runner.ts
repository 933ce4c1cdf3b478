/**
 * Runs one workflow: nodes in topological order, agent nodes dispatched through the fleet
 * dispatcher under the run's coordination, edge conditions deciding which branches live, pruned
 * branches SKIPPED. The run record is updated in place as nodes end, so a reader sees its progress.
 */
import { failedResult, type AgentCall, type AgentResult } from '../contracts/index.js'
import { resultKeys, type DispatchContext, type FleetDispatcher } from '../fleet/index.js'
import type { WorkflowEdge, WorkflowNode } from './workflow-manifest.js'
import type { NodeResultInfo, WorkflowRunInfo } from './workflow-run.js'
import type { ApprovalOutcome, WorkflowApprovals } from './workflow-approvals.js'
import { takenEdges, type Outcome, type WorkflowGraph } from './workflow-graph.js'

export const DEFAULT_APPROVAL_SECONDS = 300
export const PRUNED = 'all upstream branches pruned'
export const STOPPED = 'not run: the platform stopped'

export interface RunnerDeps {
  dispatcher: FleetDispatcher
  approvals: WorkflowApprovals
  /** Called when the run parks at an approval. */
  onWaiting: () => void
  /** Called after each change of the run record (a node's result, parking, resuming, the end). */
  onChange?: () => void
}

const DENIED: Record<Exclude<ApprovalOutcome, 'approved'>, string> = {
  denied: 'approval denied',
  expired: 'approval denied: it expired before anyone decided',
  stopped: 'approval denied: the platform stopped while it was pending'
}

/** Args an agent node sends: `config.args`, then the upstream text as `input`. */
function callOf(n: WorkflowNode, input: string): AgentCall {
  const c = n.config
  const args = (c.args ?? {}) as Record<string, unknown>
  return {
    agent: typeof c.agent === 'string' ? c.agent : n.id,
    skill: typeof c.skill === 'string' ? c.skill : 'run',
    args: { ...args, input }
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

export class WorkflowRunner {
  private readonly outcomes = new Map<string, Outcome>()
  private readonly taken = new Set<WorkflowEdge>()
  /** Agent nodes a fan-out already ran as a batch. */
  private readonly done = new Set<string>()

  constructor(
    private readonly g: WorkflowGraph,
    private readonly run: WorkflowRunInfo,
    private readonly ctx: DispatchContext,
    private readonly deps: RunnerDeps
  ) {}

  /** Runs every node; never rejects: a fault of the runner itself fails the run and is returned to log. */
  async execute(input: string): Promise<unknown> {
    try {
      for (const n of this.g.order) {
        if (this.done.has(n.id)) continue
        const live = this.liveInputs(n)
        if (this.ctx.signal?.aborted === true)
          this.finish(n, { status: 'SKIPPED', error: STOPPED }, undefined, undefined)
        else if (live === undefined) this.finish(n, { status: 'SKIPPED', error: PRUNED }, undefined, undefined)
        else await this.step(n, live.length === 0 ? [input] : live)
      }
      this.end(false)
      return undefined
    } catch (err) {
      this.end(true)
      return err
    }
  }

  /** Texts of the taken edges into `n`, in edge order; [] for a root; undefined when all are pruned. */
  private liveInputs(n: WorkflowNode): string[] | undefined {
    const edges = this.g.incoming.get(n.id)!
    if (edges.length === 0) return []
    const live = edges.filter((e) => this.taken.has(e))
    if (live.length === 0) return undefined
    return live.map((e) => this.outcomes.get(e.from)!.text)
  }

  private async step(n: WorkflowNode, inputs: string[]): Promise<void> {
    const started = performance.now()
    const text = inputs.join('\n')
    switch (n.type) {
      case 'agent': {
        const r = await this.call(callOf(n, text))
        this.agentResult(n, r, started)
        return
      }
      case 'condition': {
        // success/failure on a condition's edges test the branch it sits on
        const ok = this.g.incoming.get(n.id)!.every((e) => !this.taken.has(e) || this.outcomes.get(e.from)!.ok)
        this.finish(n, { status: 'SUCCEEDED', output: text }, started, { ok, text })
        return
      }
      case 'fan-out':
        this.finish(n, { status: 'SUCCEEDED', output: text }, started, { ok: true, text })
        await this.fanOut(n, text)
        return
      case 'join': {
        const sep = typeof n.config.separator === 'string' ? n.config.separator : '\n'
        const joined = inputs.join(sep)
        this.finish(n, { status: 'SUCCEEDED', output: joined }, started, { ok: true, text: joined })
        return
      }
      case 'approval':
        await this.approval(n, text, started)
        return
      case 'output':
        this.finish(n, { status: 'SUCCEEDED', output: text }, started, { ok: true, text })
        return
    }
  }

  private async call(c: AgentCall): Promise<AgentResult> {
    try {
      return await this.deps.dispatcher.call(this.ctx, c)
    } catch (err) {
      // the dispatcher answers failures as results; a throw is a fault, kept to this node
      return failedResult(c, message(err))
    }
  }

  private agentResult(n: WorkflowNode, r: AgentResult, started: number): void {
    if (r.success) this.finish(n, { status: 'SUCCEEDED', output: r.text }, started, { ok: true, text: r.text })
    else this.finish(n, { status: 'FAILED', error: r.text }, started, { ok: false, text: '' })
  }

  /** Two or more agent successors whose only input is this fan-out run as one parallel batch. */
  private async fanOut(n: WorkflowNode, text: string): Promise<void> {
    const batch = this.g.outgoing
      .get(n.id)!
      .filter((e) => this.taken.has(e))
      .map((e) => this.g.byId.get(e.to)!)
      .filter((m) => m.type === 'agent' && this.g.incoming.get(m.id)!.length === 1)
    if (batch.length < 2) return
    const calls = batch.map((m) => callOf(m, text))
    const started = performance.now()
    let results: Record<string, AgentResult> = {}
    let fault: string | undefined
    try {
      results = await this.deps.dispatcher.parallel(this.ctx, calls)
    } catch (err) {
      fault = message(err)
    }
    const keys = resultKeys(calls)
    batch.forEach((m, i) => {
      this.done.add(m.id)
      this.agentResult(
        m,
        results[keys[i]!] ?? failedResult(calls[i]!, fault ?? 'no result from the parallel batch'),
        started
      )
    })
  }

  private async approval(n: WorkflowNode, text: string, started: number): Promise<void> {
    const c = n.config
    const seconds = typeof c.timeoutSeconds === 'number' ? c.timeoutSeconds : DEFAULT_APPROVAL_SECONDS
    const { approval, outcome } = this.deps.approvals.request(
      {
        toolName: `workflow:${this.run.workflowId}:${n.id}`,
        arguments: { workflowId: this.run.workflowId, nodeId: n.id, runId: this.run.runId },
        message: typeof c.message === 'string' && c.message !== '' ? c.message : `Approve step ${n.label}?`,
        conversationId: this.run.coordinationId
      },
      seconds * 1000
    )
    const waiting: NodeResultInfo = {
      nodeId: n.id,
      type: n.type,
      status: 'WAITING_APPROVAL',
      output: '',
      error: '',
      duration: 0
    }
    this.run.nodeResults.push(waiting)
    this.run.status = 'WAITING_APPROVAL'
    this.run.pendingApproval = approval
    this.deps.onChange?.()
    this.deps.onWaiting()
    const o = await outcome
    this.run.nodeResults.splice(this.run.nodeResults.indexOf(waiting), 1)
    this.run.status = 'RUNNING'
    this.run.pendingApproval = null
    if (o === 'approved') {
      this.finish(n, { status: 'SUCCEEDED', output: text }, started, { ok: true, text })
      return
    }
    // denied: every branch below it is pruned, whatever its edges' conditions
    this.finish(n, { status: 'FAILED', error: DENIED[o] }, started, undefined)
  }

  /** Records a node's result; with an outcome its taken edges go live, without one none do. */
  private finish(
    n: WorkflowNode,
    r: Pick<NodeResultInfo, 'status'> & Partial<Pick<NodeResultInfo, 'output' | 'error'>>,
    started: number | undefined,
    outcome: Outcome | undefined
  ): void {
    const duration = started === undefined ? 0 : Math.round((performance.now() - started) * 1000) / 1000
    this.run.nodeResults.push({
      nodeId: n.id,
      type: n.type,
      status: r.status,
      output: r.output ?? '',
      error: r.error ?? '',
      duration
    })
    this.deps.onChange?.()
    if (outcome === undefined) return
    this.outcomes.set(n.id, outcome)
    for (const e of takenEdges(this.g.outgoing.get(n.id)!, outcome)) this.taken.add(e)
  }

  private end(crashed: boolean): void {
    const run = this.run
    const results = run.nodeResults
    const outputs = results.filter((r) => r.type === 'output' && r.status === 'SUCCEEDED').map((r) => r.output)
    const last = [...results].reverse().find((r) => r.status !== 'SKIPPED')
    run.output = outputs.length > 0 ? outputs.join('\n') : (last?.output ?? '')
    const whole = !crashed && this.ctx.signal?.aborted !== true && results.every((r) => r.status !== 'FAILED')
    run.status = whole ? 'SUCCEEDED' : 'FAILED'
    run.pendingApproval = null
    run.completedAt = new Date().toISOString()
    this.deps.onChange?.()
  }
}
