// The decision log's LMDB copy and its counters: every field of every evaluation comes back
// after a restart exactly as recorded (the log stores rows with repeated values left out), and
// /metrics counts each evaluation once, at every scrape.
import t from 'tap'
import { entryCount } from '../helpers/entry-count.js'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform } from '../helpers/platform.js'
import { governanceOf } from '../../runtime/governance/index.js'
import { aiRequest, type DecisionEntry } from '../../runtime/contracts/index.js'
import { installAreas } from '../../runtime/areas.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import type { Platform } from '../../runtime/platform.js'
import { DECISION_COLUMNS, GovernanceDecisionLog } from '../../runtime/governance/decision-log.js'
import { Store, type LogKey } from '../../runtime/store/index.js'
import { entryCountOf } from '../../runtime/store/log-page.js'
import { PagePacker } from '../../runtime/store/packed-page.js'
import { decisionCounter } from '../../runtime/governance/metrics.js'
import { Registry } from 'prom-client'
import type { Metrics } from '../../runtime/observability/index.js'

const install = (p: Platform) => installAreas(p, [scopeArea, governanceArea])
const dir = mkdtempSync(join(tmpdir(), 'gov-decision-store-'))
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true })
})
const file = join(dir, 'policies.yaml')
writeFileSync(
  file,
  `version: "2"
policies:
  - {name: no-secrets, type: deny-list, config: {phrases: [secret]}}
  - {name: prefer-py3, type: preference, config: {phrases: [python 2], prefer: Python 3, reason: EOL}}
  - {name: short, type: message-length, config: {max-chars: 4000}}
`
)
const config = {
  'platform.data-dir': join(dir, 'data'),
  'platform.ai.governance.policy-files': [file],
  'platform.ai.governance.decision-log.capacity': 4
}

t.test("an entry's row holds every field in the columns' order and builds the entry back", async (t) => {
  const e: DecisionEntry = {
    timestamp: '2026-01-01T00:00:00.000Z',
    policy_name: 'n',
    policy_source: 's',
    policy_version: 'v',
    decision: 'deny',
    reason: 'r',
    evaluation_ms: 1.5,
    context_snapshot: { phase: 'pre_admission' }
  }
  t.same([...DECISION_COLUMNS.names].sort(), Object.keys(e).sort(), 'every field is a column')
  t.same(
    DECISION_COLUMNS.row(e),
    DECISION_COLUMNS.names.map((n) => e[n])
  )
  const back = DECISION_COLUMNS.entry(DECISION_COLUMNS.row(e))
  t.same(back, e)
  t.same(Object.keys(back), Object.keys(e), "in the gate's field order")
})

t.test('the columns a decision changes from the one before are the cells of its row that differ', async (t) => {
  const changed = DECISION_COLUMNS.changed!
  const base: DecisionEntry = {
    timestamp: 'T1',
    policy_name: 'a',
    policy_source: 's',
    policy_version: '1',
    decision: 'admit',
    reason: '',
    evaluation_ms: 0,
    context_snapshot: { phase: 'pre_admission' }
  }
  const others: Partial<DecisionEntry>[] = [
    { timestamp: 'T2' },
    { policy_name: 'b' },
    { policy_source: 't' },
    { policy_version: '2' },
    { decision: 'deny', reason: 'no' },
    { evaluation_ms: 0.001 },
    { evaluation_ms: -0 },
    { evaluation_ms: NaN },
    { context_snapshot: { phase: 'pre_admission' } },
    {}
  ]
  for (const o of others) {
    const e = { ...base, ...o }
    const prev = DECISION_COLUMNS.row(base)
    const row = DECISION_COLUMNS.row(e)
    const into = new Array<unknown>(8)
    const m = changed(base, e, into)
    const told = DECISION_COLUMNS.names.filter((_, j) => (m & (1 << j)) !== 0)
    t.same(
      told,
      DECISION_COLUMNS.names.filter((_, j) => row[j] !== prev[j]),
      `${String(Object.values(o)[0])}`
    )
    t.ok(
      told.every((_, j) => Object.is(into[DECISION_COLUMNS.names.indexOf(told[j]!)], e[told[j]!])),
      'the values that changed are written out'
    )
  }
  // a page packed with the log's compares is the page packed by comparing its rows
  const page: DecisionEntry[] = []
  for (let turn = 0; turn < 4; turn++) {
    const snapshot = { phase: 'pre_admission', message: `m${turn % 2}` }
    for (const name of ['a', 'b', 'c'])
      page.push({
        ...base,
        timestamp: `T${turn}`,
        policy_name: name,
        evaluation_ms: (turn % 3) / 1000,
        context_snapshot: snapshot
      })
  }
  page.push({ ...page[page.length - 1]!, decision: 'deny', reason: 'no', evaluation_ms: -0 })
  const { names, row } = DECISION_COLUMNS
  t.same(new PagePacker().pack(page, names, row, changed), new PagePacker().pack(page, names, row))
})

t.test('a full page of a busy run of turns is one LMDB page: no overflow pages to write', async (t) => {
  const store = new Store(join(dir, 'page-bytes'))
  t.teardown(() => store.close())
  const db = store.db<DecisionEntry, LogKey>('decisions')
  const log = new GovernanceDecisionLog(1000, db)
  const policies = [
    'kill',
    'deny',
    'pii',
    'len',
    'rate',
    'conc',
    'hours',
    'meta',
    'roles',
    'cost',
    'pref',
    'zscore',
    'scope'
  ]
  const recorded: DecisionEntry[] = []
  // 10 turns of 13 policies, two phases each, recorded in one turn of the event loop
  for (let turn = 0; turn < 10; turn++)
    for (const phase of ['pre_admission', 'post_response']) {
      const snapshot: Record<string, unknown> = {
        phase,
        message: `Where is my order ${turn}?`,
        model: 'zero',
        user_id: 'alice',
        session_id: `session-${turn}`,
        agent_id: 'shop',
        roles: '["customer"]',
        'client.channel': 'web'
      }
      if (phase === 'post_response') snapshot.response_preview = `It shipped on day ${turn}.`
      const timestamp = new Date(Date.UTC(2026, 0, 1, 0, 0, turn, phase === 'pre_admission' ? 0 : 5)).toISOString()
      for (const [i, name] of policies.entries()) {
        const e: DecisionEntry = {
          timestamp,
          policy_name: name,
          policy_source: 'yaml:policies.yaml',
          policy_version: '1.0',
          decision: 'admit',
          reason: '',
          evaluation_ms: ((turn + i) % 7) / 1000,
          context_snapshot: snapshot
        }
        recorded.push(e)
        log.record(e)
      }
    }
  await log.written()
  const [first] = [...db.getKeys({ limit: 1 })]
  t.equal(entryCountOf(db.get(first!)), 256)
  // LMDB writes a value that does not fit in its 4 096-byte page to overflow pages, which costs
  // its writer several times a small value's write
  t.ok(db.getBinary(first!)!.length < 4000, `${db.getBinary(first!)!.length} bytes`)
  t.same(log.recent(1000), recorded.slice().reverse())
  t.same(new GovernanceDecisionLog(1000, db).recent(1000), recorded.slice().reverse(), 'read back from LMDB')
})

t.test('every evaluation reads back whole from LMDB, after a restart too', async (t) => {
  let tp = await startTestPlatform(config, { install })
  let gov = governanceOf(tp.platform)!
  const turn = async (message: string, userId: string, response: string): Promise<void> => {
    const request = aiRequest({ message, userId, sessionId: 's-' + userId, metadata: { n: 2, obj: { a: 1 } } })
    const a = await gov.gate.admit('test', request)
    if (a.admitted) await gov.gate.afterResponse('test', a.request, response)
  }
  await turn('python 2 help', 'u1', 'use Python 3')
  await turn('the secret plan', 'u2', '')
  await turn('hello', 'u3', 'hi')
  // the ring holds 4: the rest of the 3 + 3 + 1 + 3 + 3 evaluations are read from LMDB once
  // written (at the end of this turn of the event loop) and committed
  await new Promise((resolve) => setImmediate(resolve))
  await tp.platform.store.db('decisions').committed
  const recorded: DecisionEntry[] = gov.decisionLog.recent(100)
  t.equal(recorded.length, 13)
  t.same(recorded.map((e) => [e.policy_name, e.decision]).reverse(), [
    ['no-secrets', 'admit'],
    ['prefer-py3', 'prefer'],
    ['short', 'admit'],
    ['no-secrets', 'admit'],
    ['prefer-py3', 'admit'],
    ['short', 'admit'],
    ['no-secrets', 'deny'],
    ['no-secrets', 'admit'],
    ['prefer-py3', 'admit'],
    ['short', 'admit'],
    ['no-secrets', 'admit'],
    ['prefer-py3', 'admit'],
    ['short', 'admit']
  ])
  const prefer = recorded.find((e) => e.decision === 'prefer')!
  t.same(prefer.context_snapshot, {
    phase: 'pre_admission',
    message: 'python 2 help',
    user_id: 'u1',
    session_id: 's-u1',
    n: 2,
    obj: '{"a":1}',
    preferred: 'Python 3'
  })
  t.equal(recorded.find((e) => e.decision === 'deny')!.reason, 'deny-list: request matched a denied phrase')
  const copy = structuredClone(recorded)
  await tp.close()

  tp = await startTestPlatform(config, { install })
  t.teardown(tp.close)
  gov = governanceOf(tp.platform)!
  t.same(gov.decisionLog.recent(100), copy, 'the same entries, every field')
  t.same(
    Object.keys(gov.decisionLog.recent(100).at(-1)!),
    Object.keys(copy.at(-1)!),
    'fields in the order the gate records them'
  )
})

t.test(
  'decisions waiting for their page to fill are written when an answer waits for them, and at shutdown',
  async (t) => {
    // a window no test outlasts: only a wait or the shutdown writes the page
    const windowed = {
      ...config,
      'platform.data-dir': join(dir, 'windowed'),
      'platform.ai.governance.decision-log.flush-ms': 60_000
    }
    let tp = await startTestPlatform(windowed, { install })
    let gov = governanceOf(tp.platform)!
    await gov.gate.admit('test', aiRequest({ message: 'first', userId: 'u1' }))
    await new Promise((resolve) => setImmediate(resolve))
    const db = tp.platform.store.db('decisions')
    await db.committed
    t.equal(entryCount(db), 0, 'an event-loop turn later the page still waits')
    await gov.decisionLog.written()
    t.equal(entryCount(db), 1, 'written() wrote it')
    await gov.gate.admit('test', aiRequest({ message: 'second', userId: 'u1' }))
    await tp.close()

    tp = await startTestPlatform(windowed, { install })
    t.teardown(tp.close)
    gov = governanceOf(tp.platform)!
    t.same(
      gov.decisionLog.recent(100).map((e) => e.context_snapshot.message),
      ['second', 'second', 'second', 'first', 'first', 'first'],
      'the page still waiting at shutdown was written before the store closed'
    )
  }
)

t.test('/metrics counts every evaluation once, scrape after scrape', async (t) => {
  const tp = await startTestPlatform(
    { 'platform.ai.governance.policy-files': [file], 'platform.admin.enabled': false },
    { install }
  )
  t.teardown(tp.close)
  const gov = governanceOf(tp.platform)!
  const count = async (policy: string, decision: string): Promise<number> => {
    const text = await fetch(`${tp.url}/metrics`).then((r) => r.text())
    const m = new RegExp(
      `platform_governance_decisions_total\\{policy="${policy}",decision="${decision}"\\} (\\d+)`
    ).exec(text)
    return m === null ? 0 : Number(m[1])
  }
  for (let i = 0; i < 3; i++) await gov.gate.admit('test', aiRequest({ message: 'hello' }))
  await gov.gate.admit('test', aiRequest({ message: 'secret' }))
  t.equal(await count('short', 'admit'), 3)
  t.equal(await count('no-secrets', 'admit'), 3)
  t.equal(await count('no-secrets', 'deny'), 1)
  t.equal(await count('no-secrets', 'deny'), 1, 'a second scrape adds nothing')
  for (let i = 0; i < 2; i++) await gov.gate.admit('test', aiRequest({ message: 'python 2' }))
  t.equal(await count('prefer-py3', 'prefer'), 2)
  t.equal(await count('short', 'admit'), 5)
  t.equal(await count('no-secrets', 'deny'), 1)
})

t.test('the decision counter counts each policy apart whatever the order of evaluation', async (t) => {
  const registry = new Registry()
  const observe = decisionCounter({ registry } as unknown as Metrics)
  // the same order twice, then changed, a policy left out, a new one, and a name built anew
  const runs = [
    ['a', 'b', 'c'],
    ['a', 'b', 'c'],
    ['a', 'c', 'b'],
    ['b', 'c'],
    ['d', 'a', 'b', 'c'],
    ['a', ['b'].join(''), 'c']
  ]
  const want = new Map<string, number>()
  for (const run of runs)
    for (const p of run) {
      observe(p, p === 'c' ? 'deny' : 'admit')
      want.set(p, (want.get(p) ?? 0) + 1)
    }
  observe('a', 'odd')
  const [metric] = await registry.getMetricsAsJSON()
  const got = new Map<string, number>()
  for (const v of metric!.values) got.set(`${String(v.labels.policy)}:${String(v.labels.decision)}`, v.value)
  t.same(
    Object.fromEntries(got),
    { 'a:admit': want.get('a'), 'b:admit': want.get('b'), 'c:deny': want.get('c'), 'd:admit': 1, 'a:odd': 1 },
    'every evaluation counted once, under its own policy'
  )
})
