// The runs kept are a bounded window: past the limit the oldest ended run goes; when every kept run
// is still waiting, a new one is refused (503) rather than dropping a run someone must decide.
// Closing denies what is pending and starts no further node. On the platform's real dispatcher.
import t from 'tap'
import { parseManifest } from '../../runtime/workflows/workflow-manifest.js'
import { FLEET } from '../../runtime/fleet/index.js'
import { WorkflowRuns } from '../../runtime/workflows/workflow-runs.js'
import { PlatformError } from '../../runtime/contracts/index.js'
import { WORKFLOWS_ERRORS } from '../../runtime/workflows/errors.js'
import { workflowPlatform } from './workflow-fleet.js'

const tp = await workflowPlatform()
t.teardown(tp.close)
const dispatcher = tp.platform.area(FLEET).dispatcher

const quick = parseManifest({
  id: 'quick',
  name: 'Quick',
  version: 1,
  nodes: [{ id: 'c', type: 'agent', config: { agent: 'classify' } }],
  edges: []
})
const gated = parseManifest({
  id: 'gated',
  name: 'Gated',
  version: 1,
  nodes: [
    { id: 'ok', type: 'approval' },
    { id: 'after', type: 'agent', config: { agent: 'research' } }
  ],
  edges: [{ from: 'ok', to: 'after' }]
})

t.test('past the limit the oldest ended run is dropped', async (t) => {
  const runs = new WorkflowRuns(dispatcher, (err) => t.fail(String(err)), 2)
  t.teardown(() => runs.close())
  const a = await runs.start(quick, 'ops', 'fire', 'eve')
  const b = await runs.start(quick, 'ops', 'tea', 'eve')
  t.match(a, { status: 'SUCCEEDED', output: 'urgent incident' })
  const c = await runs.start(quick, 'ops', 'x', 'eve')
  t.same(
    runs.list().map((r) => r.runId),
    [c.runId, b.runId]
  )
  t.equal(runs.get(a.runId), undefined)
})

t.test('when every kept run waits, a new run is refused', async (t) => {
  const runs = new WorkflowRuns(dispatcher, (err) => t.fail(String(err)), 2)
  const w1 = await runs.start(gated, 'ops', '', 'eve')
  await runs.start(gated, 'ops', '', 'eve')
  t.equal(w1.status, 'WAITING_APPROVAL')
  t.throws(
    () => runs.start(quick, 'ops', '', 'eve'),
    new PlatformError(WORKFLOWS_ERRORS.WORKFLOW_RUNS_FULL, { limit: 2 })
  )
  t.throws(
    () => runs.start(quick, 'ops', '', 'eve'),
    { code: 'PLT_ERR_WORKFLOW_RUNS_FULL', status: 503 },
    'the run route answers it as a 503'
  )
  t.ok(runs.decide(w1.pendingApproval!.approvalId, true))
  const ended = await new Promise<unknown>((resolve) => {
    const poll = (): void => {
      const r = runs.get(w1.runId)!
      if (r.completedAt !== null) resolve(r)
      else setTimeout(poll, 10)
    }
    poll()
  })
  t.match(ended, { status: 'SUCCEEDED', output: 'research: three facts' })
  t.match(await runs.start(quick, 'ops', '', 'eve'), { status: 'SUCCEEDED' }, 'an ended run made room')

  await runs.close()
  const stopped = runs.list().find((r) => r.workflowId === 'gated' && r.runId !== w1.runId)!
  t.equal(stopped.status, 'FAILED')
  t.same(
    stopped.nodeResults.map((r) => [r.nodeId, r.status, r.error]),
    [
      ['ok', 'FAILED', 'approval denied: the platform stopped while it was pending'],
      ['after', 'SKIPPED', 'not run: the platform stopped']
    ]
  )
  t.same(runs.approvals(), [])
  t.throws(() => runs.start(quick, 'ops', '', 'eve'), { message: 'the platform is stopping' })
})
