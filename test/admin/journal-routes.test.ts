// The journal routes (`/journal`, `/journal/{id}`, `/tree`, `/log`) over a real LMDB journal store on
// the platform's own environment, filled with the events a parallel coordination journals.
import t from 'tap'
import { EMPTY_FLEET } from '../../runtime/admin/fleet-view.js'
import { LmdbJournalStore } from '../../runtime/fleet/lmdb-journal-store.js'
import { type JournalRecord } from '../../runtime/fleet/fleet-types.js'
import { adminPlatformSwappingFleet, call, BOB, TOKENS } from './helpers.js'

const tp = await adminPlatformSwappingFleet({ 'platform.auth.tokens': TOKENS })
t.teardown(tp.close)
const store = new LmdbJournalStore(tp.platform.store, 1000)
tp.fleet({
  ...EMPTY_FLEET,
  journal: (q) => store.query(q),
  coordination: (id) => store.coordination(id)
})

const at = (ms: number) => new Date(Date.parse('2026-11-24T10:00:00.000Z') + ms).toISOString()
function e(
  eventId: string,
  parentEventId: string | null,
  type: JournalRecord['type'],
  ms: number,
  fields: Record<string, unknown>,
  coordinationId = 'coord-p'
): JournalRecord {
  return { eventId, parentEventId, type, coordinationId, timestamp: at(ms), ...fields }
}

// parallel(research, writer): the writer fails and hands off to an editor; research is evaluated
const parallel: JournalRecord[] = [
  e('s', null, 'CoordinationStarted', 0, { coordinatorName: 'ops' }),
  e('d1', 's', 'AgentDispatched', 1, { agentName: 'research', skill: 'run' }),
  e('d2', 's', 'AgentDispatched', 1, { agentName: 'writer', skill: 'draft' }),
  e('k1', 'd1', 'CommitmentRecorded', 2, {
    subject: 'research',
    issuer: 'coordinator:ops',
    outcome: 'dispatched',
    scope: 'run',
    signatureScheme: 'Ed25519',
    signatureKeyId: 'k-1',
    signed: true
  }),
  e('f2', 'd2', 'AgentFailed', 5, { agentName: 'writer', skill: 'draft', error: 'rate limited\nretry later' }),
  e('h2', 'f2', 'AgentHandoff', 6, { fromAgent: 'writer', toAgent: 'editor', reason: 'writer failed' }),
  e('c1', 'd1', 'AgentCompleted', 12, { agentName: 'research', skill: 'run', durationMs: 11 }),
  e('v1', 'c1', 'AgentEvaluated', 13, { agentName: 'research', evaluatorName: 'judge', score: 0.9, passed: true }),
  e('end', 's', 'CoordinationCompleted', 14, { totalDurationMs: 14, agentCallCount: 2 })
]
// a lone call, a routing decision and the fleet's own state changes, in another coordination
const lone: JournalRecord[] = [
  e('r', null, 'RouteEvaluated', 20, { inputAgent: 'triage', selectedAgent: 'billing', matched: false }, 'coord-l'),
  e('ld', null, 'AgentDispatched', 21, { agentName: 'billing', skill: 'run' }, 'coord-l'),
  e('la', 'ld', 'AgentActivityChanged', 22, { agentName: 'billing', activityType: 'thinking', detail: '' }, 'coord-l'),
  e('cb', null, 'CircuitStateChanged', 23, { agentName: 'billing', fromState: 'CLOSED', toState: 'OPEN' }, 'coord-l'),
  e('fk', 'd2', 'ForkCreated', 24, { parentCoordinationId: 'coord-p', reason: 'retry' }, 'coord-l')
]
await store.append(parallel)
await store.append(lone)

const get = (path: string) => call(tp, 'GET', path, { token: BOB })

t.test('tree: roots in journal order, children under their parent in the order journaled', async (t) => {
  const r = await get('/journal/coord-p/tree')
  t.equal(r.status, 200)
  const shape = (nodes: any[]): unknown[] =>
    nodes.map((n) => (n.children === undefined ? n.eventId : { [n.eventId]: shape(n.children) }))
  t.same(shape(r.body), [{ s: [{ d1: ['k1', { c1: ['v1'] }] }, { d2: [{ f2: ['h2'] }] }, 'end'] }])
  const root = r.body[0]
  t.same(
    Object.keys(root),
    ['eventId', 'type', 'coordinationId', 'timestamp', 'coordinatorName', 'children'],
    'a root has no parentEventId'
  )
  const d1 = root.children[0]
  t.same(Object.keys(d1), [
    'eventId',
    'parentEventId',
    'type',
    'coordinationId',
    'timestamp',
    'agentName',
    'skill',
    'children'
  ])
  t.same(
    d1.children[1].children[0],
    {
      eventId: 'v1',
      parentEventId: 'c1',
      type: 'AgentEvaluated',
      coordinationId: 'coord-p',
      timestamp: at(13),
      agentName: 'research',
      evaluatorName: 'judge',
      score: 0.9,
      passed: true
    },
    'a leaf: every field, no children'
  )
})

t.test('tree: a parent outside the coordination makes a root; lone calls are roots', async (t) => {
  const r = await get('/journal/coord-l/tree')
  t.same(
    r.body.map((n: any) => [n.eventId, n.parentEventId, (n.children ?? []).map((c: any) => c.eventId)]),
    [
      ['r', undefined, []],
      ['ld', undefined, ['la']],
      ['cb', undefined, []],
      ['fk', 'd2', []]
    ],
    "the fork keeps its link to the other coordination's event"
  )
})

t.test('log: "<N> events:" and one line per event, each type its own kind', async (t) => {
  const p = await get('/journal/coord-p/log')
  t.equal(p.status, 200)
  t.equal(p.type, 'text/plain; charset=utf-8')
  t.equal(
    p.text,
    [
      '9 events:',
      '  START  ops',
      '  DISPATCH  research -> run',
      '  DISPATCH  writer -> draft',
      '  COMMIT  research dispatched (signed)',
      '  FAIL  writer: rate limited retry later',
      '  HANDOFF  writer -> editor: writer failed',
      '  DONE  research (11ms)',
      '  EVAL  research by judge: 0.9 passed',
      '  COMPLETE  2 calls (14ms)',
      ''
    ].join('\n'),
    'a newline inside a field never splits a line'
  )
  t.equal(
    (await get('/journal/coord-l/log')).text,
    [
      '5 events:',
      '  ROUTE  triage -> billing (no match)',
      '  DISPATCH  billing -> run',
      '  ACTIVITY  billing thinking',
      '  CIRCUIT  billing CLOSED -> OPEN',
      '  FORK  from coord-p: retry',
      ''
    ].join('\n')
  )
})

t.test('one coordination: all its events oldest first; unknown ids 404 on every sub-route', async (t) => {
  t.same((await get('/journal/coord-p')).body, parallel)
  for (const path of ['/journal/coord-x', '/journal/coord-x/tree', '/journal/coord-x/log', '/journal/coord/tree']) {
    const r = await get(path)
    t.equal(r.status, 404, path)
    t.same(r.body, { error: `Unknown coordination '${path.split('/')[2]}'`, code: 'PLT_ERR_UNKNOWN_COORDINATION' })
  }
})

t.test('query: newest first, by coordination (which wins over agent), agent, time; limit', async (t) => {
  const ids = async (q: string) => ((await get('/journal' + q)).body as JournalRecord[]).map((x) => x.eventId)
  t.same(await ids(''), [...parallel, ...lone].map((x) => x.eventId).reverse())
  t.same(await ids('?coordinationId=coord-l'), ['fk', 'cb', 'la', 'ld', 'r'])
  t.same(await ids('?coordinationId=coord-l&agent=research'), ['fk', 'cb', 'la', 'ld', 'r'], 'coordinationId wins')
  t.same(await ids('?agent=writer'), ['h2', 'f2', 'd2'], 'agentName and fromAgent')
  t.same(await ids('?agent=billing'), ['cb', 'la', 'ld', 'r'], 'selectedAgent too')
  t.same(await ids(`?since=${at(12)}&until=${at(14)}`), ['end', 'v1', 'c1'], 'both bounds inclusive')
  t.same(
    await ids(`?agent=research&until=${encodeURIComponent('2026-11-24T12:00:00.002+02:00')}`),
    ['d1'],
    'an offset; a commitment names its subject, not an agent'
  )
  t.same(await ids('?since=2026-11-25'), [], 'a date alone is UTC midnight')
  t.same(await ids('?limit=2'), ['fk', 'cb'])
  t.same((await get('/journal?coordinationId=nope')).body, [])
})

t.test('query: limit defaults to 100; a bad timestamp or limit is a 400 naming it', async (t) => {
  const many = Array.from({ length: 150 }, (_, i) =>
    e(`m${i}`, null, 'AgentDispatched', 1000 + i, { agentName: 'bulk', skill: 'run' }, 'coord-m')
  )
  await store.append(many)
  const all = (await get('/journal?agent=bulk')).body as JournalRecord[]
  t.equal(all.length, 100)
  t.equal(all[0]!.eventId, 'm149')
  for (const bad of ['yesterday', '1', '2026-11-24T10:00:00', '2026-11-24 10:00Z', '']) {
    const r = await get(`/journal?since=${encodeURIComponent(bad)}`)
    t.equal(r.status, 400, JSON.stringify(bad))
    t.equal(r.body.code, 'PLT_ERR_INVALID_QUERY')
    if (bad !== '') t.equal(r.body.error, `Invalid query parameter 'since': Invalid timestamp: ${bad}`)
  }
  t.same((await get('/journal?until=soon')).body.error, "Invalid query parameter 'until': Invalid timestamp: soon")
  for (const limit of ['0', '10001', '2.5', 'ten']) t.equal((await get(`/journal?limit=${limit}`)).status, 400, limit)
})

t.test('the journal reads stay behind the content gate', async (t) => {
  for (const path of ['/journal', '/journal/coord-p', '/journal/coord-p/tree', '/journal/coord-p/log']) {
    const r = await call(tp, 'GET', path)
    t.equal(r.status, 401, path)
    t.equal(r.body.code, 'PLT_ERR_ADMIN_CONTENT_READ_AUTH_REQUIRED')
  }
})
