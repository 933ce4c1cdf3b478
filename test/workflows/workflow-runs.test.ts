// Workflows run for real: POSTed to the admin API, run on a coordinator plugin's fleet through the
// fleet dispatcher, over real sockets. Conditions, a fan-out batch, a join, an approval that parks
// the run (202) and is decided over HTTP, denial and expiry pruning what follows, a failing agent,
// the checks before a run, the runs kept, the journal under the run's coordination, the audit.
import t from 'tap'
import { call } from '../admin/helpers.js'
import { APPROVER, EDITOR, incident, save, statuses, until, workflowPlatform } from './workflow-fleet.js'

const tp = await workflowPlatform()
t.teardown(tp.close)
await save(tp, incident())
const audit = () => ({ ...tp.platform.audit.entries(1)[0] })

t.test('an urgent ticket: condition, fan-out batch, join, approval parked then approved', async (t) => {
  const started = await call(tp, 'POST', '/workflow/incident/run?coordinator=ops', {
    token: EDITOR,
    body: { input: 'fire in the server room' }
  })
  t.equal(started.status, 202, 'the request is answered while the run waits')
  const run = started.body
  t.same(Object.keys(run), [
    'runId',
    'workflowId',
    'coordinator',
    'coordinationId',
    'status',
    'nodeResults',
    'output',
    'pendingApproval',
    'startedAt',
    'completedAt'
  ])
  t.match(run, { workflowId: 'incident', coordinator: 'ops', status: 'WAITING_APPROVAL', completedAt: null })
  t.match(
    run.coordinationId,
    /^coord-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    'time-ordered (UUIDv7)'
  )
  t.match(run.runId, /^run-[0-9a-f-]{36}$/)
  t.same(statuses(run), {
    classify: 'SUCCEEDED',
    route: 'SUCCEEDED',
    fan: 'SUCCEEDED',
    research: 'SUCCEEDED',
    draft: 'SUCCEEDED',
    merge: 'SUCCEEDED',
    signoff: 'WAITING_APPROVAL'
  })
  const merged = run.nodeResults.find((r: any) => r.nodeId === 'merge')
  t.match(merged.output, /^research: three facts \| draft of \d+ chars$/, 'the join uses its separator')
  t.match(audit(), { principal: 'eve', action: 'workflow.run', target: 'incident', success: true })

  const a = run.pendingApproval
  t.match(a.approvalId, /^apr_[0-9a-f]{12}$/)
  t.same(
    { ...a, approvalId: undefined, expiresAt: undefined },
    {
      toolName: 'workflow:incident:signoff',
      arguments: { workflowId: 'incident', nodeId: 'signoff', runId: run.runId },
      message: 'Page the on-call?',
      conversationId: run.coordinationId
    }
  )
  const wait = Date.parse(a.expiresAt) - Date.parse(run.startedAt)
  t.ok(wait > 299_000 && wait <= 301_000, `the default timeout is 300 s (${wait} ms)`)
  t.same((await call(tp, 'GET', '/workflow/approvals')).body, [a], 'listed while pending')

  const refused = await call(tp, 'POST', `/workflow/approvals/${a.approvalId}`, {
    token: EDITOR,
    body: { approve: true }
  })
  t.equal(refused.status, 403, 'running does not grant approving')
  const decided = await call(tp, 'POST', `/workflow/approvals/${a.approvalId}`, {
    token: APPROVER,
    body: { approve: true }
  })
  t.same(decided.body, { approvalId: a.approvalId, approved: true })
  t.match(audit(), { principal: 'ann', action: 'workflow.approve', target: a.approvalId, success: true })
  const done = await until(tp, run.runId, (r) => r.status !== 'WAITING_APPROVAL' && r.status !== 'RUNNING')
  t.equal(done.status, 'SUCCEEDED')
  t.same(statuses(done), { ...statuses(run), signoff: 'SUCCEEDED', routine: 'SKIPPED', out: 'SUCCEEDED' })
  t.equal(done.output, merged.output, 'the output node passes on what was approved')
  t.equal(done.pendingApproval, null)
  t.match(
    done.nodeResults.find((r: any) => r.nodeId === 'routine'),
    {
      status: 'SKIPPED',
      error: 'all upstream branches pruned',
      duration: 0
    }
  )
  for (const r of done.nodeResults) t.type(r.duration, 'number', `${r.nodeId} has a duration in ms`)
  t.same((await call(tp, 'GET', '/workflow/approvals')).body, [], 'decided: gone')
  const again = await call(tp, 'POST', `/workflow/approvals/${a.approvalId}`, {
    token: APPROVER,
    body: { approve: true }
  })
  t.same(again.body, { error: `No pending approval: ${a.approvalId}`, code: 'PLT_ERR_NO_PENDING_APPROVAL' })

  // every agent call went through the dispatcher under the run's coordination
  const journal = (await call(tp, 'GET', `/journal?coordinationId=${run.coordinationId}&limit=100`, { token: EDITOR }))
    .body as any[]
  const dispatched = journal.filter((e) => e.type === 'AgentDispatched').map((e) => e.agentName)
  t.same(dispatched.sort(), ['classify', 'draft', 'research'])
  // one tree: the run's CoordinationStarted is the only root, everything else hangs below it
  const roots = journal.filter((e) => e.parentEventId === null)
  t.match(roots, [{ type: 'CoordinationStarted', coordinatorName: 'ops', workflowId: 'incident', runId: run.runId }])
  const ids = new Map(journal.map((e) => [e.eventId, e]))
  const rootOf = (e: any): any => (e.parentEventId === null ? e : rootOf(ids.get(e.parentEventId)))
  for (const e of journal) t.equal(rootOf(e).eventId, roots[0].eventId, `${e.type} is under the run`)
  t.match(
    journal.find((e) => e.type === 'CoordinationCompleted' && e.parentEventId === roots[0].eventId),
    { agentCallCount: 3, totalDurationMs: Number }
  )
})

t.test('a routine ticket takes the default branch and answers 200 at once', async (t) => {
  const r = await call(tp, 'POST', '/workflow/incident/run', { token: EDITOR, body: { input: 'printer jam' } })
  t.equal(r.status, 200, 'one coordinator registered: it need not be named')
  t.match(r.body, { status: 'SUCCEEDED', coordinator: 'ops', pendingApproval: null })
  t.match(r.body.completedAt, /^\d{4}-\d\d-\d\dT/)
  t.same(statuses(r.body), {
    classify: 'SUCCEEDED',
    route: 'SUCCEEDED',
    fan: 'SKIPPED',
    research: 'SKIPPED',
    draft: 'SKIPPED',
    merge: 'SKIPPED',
    signoff: 'SKIPPED',
    routine: 'SUCCEEDED',
    out: 'SUCCEEDED'
  })
  t.match(r.body.output, /^draft of \d+ chars$/, 'routine ran the draft agent')
})

t.test('a denied approval prunes what follows; the run fails', async (t) => {
  const run = (await call(tp, 'POST', '/workflow/incident/run', { token: EDITOR, body: { input: 'flood' } })).body
  const a = run.pendingApproval
  await call(tp, 'POST', `/workflow/approvals/${a.approvalId}`, { token: APPROVER, body: { approve: false } })
  const done = await until(tp, run.runId, (r) => r.completedAt !== null)
  t.equal(done.status, 'FAILED')
  t.match(
    done.nodeResults.find((r: any) => r.nodeId === 'signoff'),
    { status: 'FAILED', error: 'approval denied' }
  )
  t.match(
    done.nodeResults.find((r: any) => r.nodeId === 'out'),
    {
      status: 'SKIPPED',
      error: 'all upstream branches pruned'
    }
  )
})

t.test('an approval nobody decides expires and counts as denied', async (t) => {
  await save(tp, { ...incident({ timeoutSeconds: 0.2 }), id: 'hasty', name: 'Hasty' })
  const run = (await call(tp, 'POST', '/workflow/hasty/run', { token: EDITOR, body: { input: 'fire' } })).body
  t.equal(run.status, 'WAITING_APPROVAL')
  const done = await until(tp, run.runId, (r) => r.completedAt !== null)
  t.equal(done.status, 'FAILED')
  t.match(
    done.nodeResults.find((r: any) => r.nodeId === 'signoff'),
    {
      status: 'FAILED',
      error: 'approval denied: it expired before anyone decided'
    }
  )
  t.equal(statuses(done).out, 'SKIPPED')
  t.same((await call(tp, 'GET', '/workflow/approvals')).body, [])
})

t.test('a failing agent marks its node FAILED and the run goes on down its failure edge', async (t) => {
  await save(tp, {
    id: 'fragile',
    name: 'Fragile',
    version: 1,
    nodes: [
      { id: 'print', type: 'agent', config: { agent: 'broken' } },
      { id: 'ghost', type: 'agent', config: { agent: 'nobody' } },
      { id: 'fallback', type: 'agent', config: { agent: 'draft' } },
      { id: 'praise', type: 'agent', config: { agent: 'research' } }
    ],
    edges: [
      { from: 'print', to: 'fallback', condition: 'failure' },
      { from: 'print', to: 'praise', condition: 'success' }
    ]
  })
  const r = await call(tp, 'POST', '/workflow/fragile/run?coordinator=ops', { token: EDITOR, body: {} })
  t.equal(r.status, 200)
  t.equal(r.body.status, 'FAILED', 'a failed node fails the run')
  const by = Object.fromEntries(r.body.nodeResults.map((n: any) => [n.nodeId, n]))
  t.match(by.print, { status: 'FAILED', error: /out of paper/, output: '' })
  t.match(by.ghost, { status: 'FAILED', error: /^No agent named 'nobody' in fleet\. Available: \[/ })
  t.match(by.fallback, { status: 'SUCCEEDED', output: /^draft of/ })
  t.match(by.praise, { status: 'SKIPPED', error: 'all upstream branches pruned' })
  t.match(r.body.output, /^draft of/, 'no output node: the last node that ran')
})

t.test('what cannot run is refused when it is saved, and before anything runs', async (t) => {
  const loop = {
    id: 'loop',
    name: 'Loop',
    version: 1,
    nodes: [
      { id: 'a', type: 'agent', config: { agent: 'classify' } },
      { id: 'b', type: 'agent', config: { agent: 'classify' } }
    ],
    edges: [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'a' }
    ]
  }
  const before = (await call(tp, 'GET', '/workflow/runs', { token: EDITOR })).body.length
  const cycle = await call(tp, 'POST', '/workflow', { token: EDITOR, body: loop })
  t.equal(cycle.status, 400)
  t.same(cycle.body, {
    error: 'Invalid workflow: workflow contains a cycle through nodes [a, b]',
    code: 'PLT_ERR_WORKFLOW_INVALID'
  })
  t.match(audit(), { action: 'workflow.write', target: 'loop', success: false })
  const nodes = Array.from({ length: 501 }, (_, i) => ({ id: `n${i}`, type: 'output' }))
  const huge = await call(tp, 'POST', '/workflow', {
    token: EDITOR,
    body: { id: 'huge', name: 'Huge', version: 1, nodes, edges: [] }
  })
  t.equal(huge.body.error, 'Invalid workflow: workflow has 501 nodes, limit is 500')
  for (const id of ['loop', 'huge'])
    t.equal((await call(tp, 'GET', `/workflow/${id}`, { token: EDITOR })).status, 404, `${id} was not stored`)
  const unsaved = await call(tp, 'POST', '/workflow/loop/run', { token: EDITOR, body: {} })
  t.equal(unsaved.status, 404)
  const bad = await call(tp, 'POST', '/workflow/incident/run?coordinator=nope', { token: EDITOR, body: {} })
  t.same(bad.body, {
    error: 'unknown coordinator: nope (registered: [ops])',
    code: 'PLT_ERR_UNKNOWN_WORKFLOW_COORDINATOR'
  })
  t.match(audit(), { action: 'workflow.run', target: 'incident', success: false })
  t.equal((await call(tp, 'GET', '/workflow/runs', { token: EDITOR })).body.length, before, 'no run was kept')
})

t.test('the runs kept: newest first, one by id, content reads', async (t) => {
  const runs = (await call(tp, 'GET', '/workflow/runs', { token: EDITOR })).body
  t.ok(runs.length >= 5)
  const times = runs.map((r: any) => r.startedAt)
  t.same(times, [...times].sort().reverse(), 'newest first')
  const two = (await call(tp, 'GET', '/workflow/runs?limit=2', { token: EDITOR })).body
  t.same(two, runs.slice(0, 2), 'limit keeps the newest')
  t.equal((await call(tp, 'GET', '/workflow/runs?limit=501', { token: EDITOR })).body.code, 'PLT_ERR_INVALID_QUERY')
  const one = await call(tp, 'GET', `/workflow/runs/${runs[0].runId}`, { token: EDITOR })
  t.same(one.body, runs[0])
  t.equal((await call(tp, 'GET', '/workflow/runs')).status, 401, 'a run holds answers: not for anonymous readers')
  t.equal(
    (await call(tp, 'GET', '/workflow/runs/run-nope', { token: EDITOR })).body.code,
    'PLT_ERR_UNKNOWN_WORKFLOW_RUN'
  )
})
