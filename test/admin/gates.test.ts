// The route matrix: every mutating admin route × {flag off, anonymous, wrong role, authorizer
// deny, allowed}, each answer and its audit entry; every content read × {anonymous, authenticated}.
import t from 'tap'
import type { TestPlatform } from '../helpers/platform.js'
import { AI } from '../../runtime/ai/index.js'
import { ADMIN } from '../../runtime/admin/key.js'
import { WORKFLOWS } from '../../runtime/workflows/key.js'
import { adminPlatform, addHelperAgent, call, ALICE, BOB, CAROL, TOKENS, WRITER, type Answer } from './helpers.js'
import { wsMember } from '../transport/clients.js'

interface Write {
  method: 'POST' | 'DELETE'
  path: string
  body?: unknown
  action: string
  target: string
}

const WRITES: Write[] = [
  {
    method: 'POST',
    path: '/broadcasters/broadcast',
    body: { broadcasterId: '/platform/rooms/lobby', message: 'hi' },
    action: 'broadcast',
    target: '/platform/rooms/lobby'
  },
  {
    method: 'POST',
    path: '/broadcasters/unicast',
    body: { broadcasterId: '/platform/rooms/lobby', uuid: 'u-1', message: 'hi' },
    action: 'unicast',
    target: 'u-1'
  },
  {
    method: 'DELETE',
    path: '/broadcasters/destroy?id=/platform/rooms/lobby',
    action: 'destroy_broadcaster',
    target: '/platform/rooms/lobby'
  },
  { method: 'DELETE', path: '/resources/u-2', action: 'disconnect', target: 'u-2' },
  { method: 'POST', path: '/resources/u-3/resume', action: 'resume', target: 'u-3' },
  { method: 'POST', path: '/tasks/task-9/cancel', action: 'cancel_task', target: 'task-9' },
  {
    method: 'POST',
    path: '/workflow/approvals/ap-1',
    body: { approve: true },
    action: 'workflow.approve',
    target: 'ap-1'
  },
  {
    method: 'DELETE',
    path: '/agents/helper/conversation/conv-1',
    action: 'agent_state.conversation.clear',
    target: 'helper/conv-1'
  },
  {
    method: 'POST',
    path: '/evals/runs',
    body: { id: 'e-1', baseline: 'b', passed: true },
    action: 'evals.write',
    target: 'e-1'
  },
  { method: 'DELETE', path: '/evals/runs/e-1', action: 'evals.delete', target: 'e-1' },
  {
    method: 'POST',
    path: '/workflow',
    body: { id: 'wf-1', name: 'wf', version: 1, nodes: [{ id: 'a', type: 'agent' }] },
    action: 'workflow.write',
    target: 'wf-1'
  },
  { method: 'POST', path: '/workflow/wf-1/run', body: { input: 'x' }, action: 'workflow.run', target: 'wf-1' },
  { method: 'DELETE', path: '/workflow/wf-1', action: 'workflow.delete', target: 'wf-1' },
  {
    method: 'POST',
    path: '/agents/helper/facts?userId=u-1',
    body: { content: 'Answers in metric units' },
    action: 'agent_state.fact.add',
    target: 'helper/user:u-1'
  },
  {
    method: 'DELETE',
    path: '/agents/helper/facts/1-0?userId=u-1',
    action: 'agent_state.fact.remove',
    target: 'helper/user:u-1/1-0'
  }
]

function send(tp: TestPlatform, w: Write, token?: string): Promise<Answer> {
  return call(tp, w.method, w.path, { ...(token !== undefined ? { token } : {}), body: w.body })
}

function lastAudit(tp: TestPlatform): Record<string, unknown> {
  return { ...tp.platform.audit.entries(1)[0] }
}

t.test('every mutating route is declared in the table with a write gate', async (t) => {
  const tp = await adminPlatform()
  t.teardown(tp.close)
  // the admin area's own table and the routes the workflows area serves under /api/admin
  const routes = [...tp.platform.area(ADMIN).routes, ...tp.platform.area(WORKFLOWS).routes]
  const declared = routes
    .filter((r) => 'write' in r.gate)
    .map((r) => `${r.method} ${r.path}`)
    .sort()
  t.same(
    declared,
    [
      'DELETE /agents/{name}/conversation/{sessionId}',
      'DELETE /agents/{name}/facts/{factId}',
      'DELETE /broadcasters/destroy',
      'DELETE /evals/runs/{id}',
      'DELETE /resources/{uuid}',
      'DELETE /workflow/{id}',
      'POST /agents/{name}/facts',
      'POST /broadcasters/broadcast',
      'POST /broadcasters/unicast',
      'POST /evals/runs',
      'POST /resources/{uuid}/resume',
      'POST /tasks/{taskId}/cancel',
      'POST /workflow',
      'POST /workflow/approvals/{approvalId}',
      'POST /workflow/{id}/run'
    ],
    'the matrix below covers every declared write'
  )
  t.equal(WRITES.length, declared.length)
  for (const r of routes) if (r.method !== 'GET') t.ok('write' in r.gate, `${r.path} is gated`)
})

t.test('flag off: 403 with the hint, audited <action>.denied.flag, nothing changes', async (t) => {
  const tp = await adminPlatform({ 'platform.auth.tokens': TOKENS })
  t.teardown(tp.close)
  const member = await wsMember(tp.url, 'lobby')
  t.teardown(() => member.ws.close())
  for (const w of WRITES) {
    const r = await send(tp, w, ALICE)
    t.equal(r.status, 403, w.path)
    t.same(r.body, {
      error: 'Admin write operations disabled',
      code: 'PLT_ERR_ADMIN_WRITE_DISABLED',
      hint: 'Set platform.admin.http-write-enabled=true to enable'
    })
    t.match(lastAudit(tp), {
      principal: 'anonymous',
      action: `${w.action}.denied.flag`,
      target: w.target,
      success: false
    })
  }
  const left = await call(tp, 'GET', '/resources')
  t.same(
    left.body.map((x: { uuid: string }) => x.uuid),
    [member.uuid],
    'the member is still connected'
  )
})

t.test('flag on: anonymous 401, wrong role 403, authorizer deny 403, each audited', async (t) => {
  const tp = await adminPlatform(WRITER)
  t.teardown(tp.close)
  const cases: [string | undefined, number, Record<string, unknown>, string, string][] = [
    [
      undefined,
      401,
      { error: 'Authentication required for admin write operations', code: 'PLT_ERR_ADMIN_AUTH_REQUIRED' },
      'anonymous',
      'anonymous'
    ],
    [BOB, 403, { error: 'Forbidden: caller lacks required role', code: 'PLT_ERR_ADMIN_ROLE_REQUIRED' }, 'bob', 'role'],
    [CAROL, 403, { error: 'Forbidden', code: 'PLT_ERR_ADMIN_FORBIDDEN' }, 'carol', 'authz']
  ]
  for (const w of WRITES) {
    for (const [token, status, body, principal, why] of cases) {
      const r = await send(tp, w, token)
      t.equal(r.status, status, `${w.path} as ${principal}`)
      t.same(r.body, body)
      t.match(lastAudit(tp), { principal, action: `${w.action}.denied.${why}`, target: w.target, success: false })
    }
  }
})

t.test('allowed: the write runs, answers its body and is audited under the principal', async (t) => {
  const tp = await adminPlatform({ ...WRITER, 'platform.ai.governance.memory.enabled': true })
  t.teardown(tp.close)
  addHelperAgent(tp)
  const ai = tp.platform.area(AI)
  await ai.memory.append('conv-1', [{ role: 'user', content: 'hello' }])

  const a = await member(tp, 'lobby')
  const b = await member(tp, 'lobby')
  const expectations: [Write, number, unknown][] = [
    [{ ...WRITES[0]! }, 200, { status: 'broadcast sent' }],
    [
      {
        ...WRITES[1]!,
        body: { broadcasterId: '/platform/rooms/lobby', uuid: a.uuid, message: 'psst' },
        target: a.uuid
      },
      200,
      { status: 'unicast sent' }
    ],
    [{ ...WRITES[3]!, path: `/resources/${b.uuid}`, target: b.uuid }, 200, { status: 'resource disconnected' }],
    [{ ...WRITES[2]! }, 200, { status: 'broadcaster destroyed' }],
    [WRITES[5]!, 404, { error: "Unknown task 'task-9'", code: 'PLT_ERR_UNKNOWN_TASK' }],
    [WRITES[6]!, 404, { error: 'No pending approval: ap-1', code: 'PLT_ERR_NO_PENDING_APPROVAL' }],
    [WRITES[7]!, 200, { cleared: 'conv-1' }],
    [WRITES[8]!, 200, { id: 'e-1', baseline: 'b', passed: true }],
    [WRITES[9]!, 200, { deleted: 'e-1' }],
    [WRITES[10]!, 200, { id: 'wf-1', name: 'wf', version: 1, updatedAt: undefined }],
    [
      WRITES[11]!,
      400,
      {
        error: 'coordinator must be specified — zero or multiple fleets are registered',
        code: 'PLT_ERR_WORKFLOW_COORDINATOR_REQUIRED',
        hint: 'Name one with ?coordinator=; GET /api/admin/coordinators lists them'
      }
    ],
    [WRITES[12]!, 200, { deleted: 'wf-1' }],
    [
      WRITES[13]!,
      200,
      {
        id: String,
        namespace: 'user:u-1',
        text: 'Answers in metric units',
        confidence: 1,
        provenance: { source: 'operator', principal: 'alice' }
      }
    ],
    [
      WRITES[14]!,
      404,
      {
        error: "No fact '1-0' under user:u-1",
        code: 'PLT_ERR_UNKNOWN_FACT',
        hint: 'GET /api/admin/agents/{name}/facts with the same userId or sessionId lists the ids'
      }
    ]
  ]
  let factId = ''
  for (const [w, status, body] of expectations) {
    const r = await send(tp, w, ALICE)
    t.equal(r.status, status, w.path)
    // a saved workflow's updatedAt and a fact's id and times are the server's: compare the rest
    if (w.path === '/workflow') t.same({ ...r.body, updatedAt: undefined }, body)
    else if (w.action === 'agent_state.fact.add') {
      t.match(r.body, body)
      factId = r.body.id
    } else t.same(r.body, body)
    t.match(lastAudit(tp), { principal: 'alice', action: w.action, target: w.target, success: status === 200 })
  }
  t.same(await ai.memory.read('conv-1'), [], 'the conversation is gone')
  const again = await send(tp, WRITES[7]!, ALICE)
  t.equal(again.status, 404, 'clearing it twice: nothing to clear')
  t.same(again.body, { error: "No conversation 'conv-1'", code: 'PLT_ERR_UNKNOWN_CONVERSATION' })
  const removal: Write = { ...WRITES[14]!, path: `/agents/helper/facts/${factId}?userId=u-1` }
  t.same((await send(tp, removal, ALICE)).body, { removed: factId }, 'the fact added above is removed by its id')
  t.match(lastAudit(tp), { principal: 'alice', action: 'agent_state.fact.remove', target: `helper/user:u-1/${factId}` })
  await a.closed
  await b.closed
})

t.test(
  'allowed writes validate after the gate: bad bodies are 400, audited as failed, and change nothing',
  async (t) => {
    const tp = await adminPlatform(WRITER)
    t.teardown(tp.close)
    const m = await member(tp, 'lobby')
    t.teardown(() => m.ws.close())
    const bad: [Write, Record<string, unknown>][] = [
      [
        {
          method: 'POST',
          path: '/broadcasters/broadcast',
          body: { broadcasterId: '/platform/rooms/lobby' },
          action: 'broadcast',
          target: '/platform/rooms/lobby'
        },
        { error: "missing 'broadcasterId' or 'message' field", code: 'PLT_ERR_MISSING_BROADCAST_FIELDS' }
      ],
      [
        { method: 'POST', path: '/broadcasters/broadcast', action: 'broadcast', target: '' },
        { error: "missing 'broadcasterId' or 'message' field", code: 'PLT_ERR_MISSING_BROADCAST_FIELDS' }
      ],
      [
        {
          method: 'POST',
          path: '/broadcasters/unicast',
          body: { broadcasterId: '/platform/rooms/lobby', message: 1 },
          action: 'unicast',
          target: ''
        },
        { error: "missing 'broadcasterId', 'uuid' or 'message' field", code: 'PLT_ERR_MISSING_UNICAST_FIELDS' }
      ],
      [
        { method: 'DELETE', path: '/broadcasters/destroy', action: 'destroy_broadcaster', target: '' },
        { error: "Invalid query parameter 'id': is required", code: 'PLT_ERR_INVALID_QUERY' }
      ],
      [
        {
          method: 'POST',
          path: '/workflow/approvals/ap-1',
          body: { approve: 'yes' },
          action: 'workflow.approve',
          target: 'ap-1'
        },
        { error: "Invalid request body: 'approve' must be boolean", code: 'PLT_ERR_INVALID_BODY' }
      ]
    ]
    for (const [w, body] of bad) {
      const r = await send(tp, w, ALICE)
      t.equal(r.status, 400, `${w.path} ${JSON.stringify(w.body)}`)
      t.same(r.body, body)
      t.match(lastAudit(tp), {
        principal: 'alice',
        action: w.action,
        target: w.target,
        success: false,
        message: body.error
      })
    }
    const missing = await send(
      tp,
      {
        method: 'POST',
        path: '/broadcasters/broadcast',
        body: { broadcasterId: '/nope', message: 'x' },
        action: 'broadcast',
        target: '/nope'
      },
      ALICE
    )
    t.equal(missing.status, 404)
    t.same(missing.body, { error: "Unknown broadcaster '/nope'", code: 'PLT_ERR_UNKNOWN_BROADCASTER' })
    t.equal(m.inbox.all.filter((f) => f.type !== 'joined').length, 0, 'the member got nothing')
  }
)

const CONTENT_READS = [
  '/audit',
  '/journal',
  '/journal/c-1',
  '/journal/c-1/tree',
  '/journal/c-1/log',
  '/agents/helper/facts',
  '/agents/helper/conversation/conv-1',
  '/governance/decisions',
  '/workflow/runs',
  '/workflow/runs/run-1'
]

t.test('content reads: anonymous 401 naming the content flag, authenticated served', async (t) => {
  const tp = await adminPlatform({ 'platform.auth.tokens': TOKENS })
  t.teardown(tp.close)
  addHelperAgent(tp)
  await tp.platform.area(AI).memory.append('conv-1', [{ role: 'user', content: 'hello' }])
  for (const path of CONTENT_READS) {
    const anon = await call(tp, 'GET', path)
    t.equal(anon.status, 401, `${path} anonymous`)
    t.same(anon.body, {
      error: 'Admin read operations require authentication',
      code: 'PLT_ERR_ADMIN_CONTENT_READ_AUTH_REQUIRED',
      hint: 'Send X-Platform-Auth header or disable platform.admin.content-read-auth-required'
    })
    const authed = await call(tp, 'GET', path, { token: BOB })
    t.not(authed.status, 401, `${path} authenticated`)
  }
  t.equal((await call(tp, 'GET', '/audit', { token: BOB })).status, 200)
  t.equal((await call(tp, 'GET', '/journal', { token: BOB })).status, 200)
  t.same((await call(tp, 'GET', '/journal/c-1', { token: BOB })).body, {
    error: "Unknown coordination 'c-1'",
    code: 'PLT_ERR_UNKNOWN_COORDINATION'
  })
  t.equal((await call(tp, 'GET', '/agents/helper/conversation/conv-1', { token: BOB })).body.messages.length, 1)
  t.same((await call(tp, 'GET', '/workflow/runs', { token: BOB })).body, [])
  t.same((await call(tp, 'GET', '/workflow/runs/run-1', { token: BOB })).body, {
    error: "Unknown workflow run 'run-1'",
    code: 'PLT_ERR_UNKNOWN_WORKFLOW_RUN',
    hint: 'Only the last 500 runs are kept, in memory; GET /api/admin/workflow/runs lists them'
  })
  const ws = await call(tp, 'GET', '/agents/helper/workspace')
  t.equal(ws.status, 401, 'workspace reads are gated too')
  t.equal(ws.body.code, 'PLT_ERR_ADMIN_WORKSPACE_READ_AUTH_REQUIRED')
  t.match(ws.body.hint, /platform\.admin\.workspace-read-auth-required/)
  t.equal((await call(tp, 'GET', '/agents/helper/workspace', { token: BOB })).status, 200)
  t.equal((await call(tp, 'GET', '/overview')).status, 200, 'open reads stay open')
})

t.test('the content and workspace flags off open those reads; http-read-auth-required closes every read', async (t) => {
  const open = await adminPlatform({
    'platform.admin.content-read-auth-required': false,
    'platform.admin.workspace-read-auth-required': false
  })
  t.teardown(open.close)
  addHelperAgent(open)
  for (const path of ['/audit', '/journal', '/agents/helper/workspace', '/governance/decisions'])
    t.equal((await call(open, 'GET', path)).status, 200, `${path} open`)

  const closed = await adminPlatform({ 'platform.admin.http-read-auth-required': true, 'platform.auth.tokens': TOKENS })
  t.teardown(closed.close)
  for (const path of ['/overview', '/broadcasters', '/audit', '/metrics']) {
    const r = await call(closed, 'GET', path)
    t.equal(r.status, 401, path)
    t.same(r.body, {
      error: 'Admin read operations require authentication',
      code: 'PLT_ERR_ADMIN_READ_AUTH_REQUIRED',
      hint: 'Send X-Platform-Auth header or disable platform.admin.http-read-auth-required'
    })
    t.equal((await call(closed, 'GET', path, { token: BOB })).status, 200)
  }
})

const member = (tp: TestPlatform, room: string) => wsMember(tp.url, room)
