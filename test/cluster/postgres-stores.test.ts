// The stores of shared state in PostgreSQL (conversation memory, operators' facts, the
// coordination journal, workflows, eval runs), on one throwaway server: first the contract suites
// the memory and LMDB stores pass, then two nodes in cluster mode on one database, where what one
// node writes the other reads, a version conflict holds across them, and a workflow run started
// on one node is read and approved on the other.
import t, { type Test } from 'tap'
import { installAreas } from '../../runtime/areas.js'
import { PostgresDb } from '../../runtime/store/index.js'
import { AI, type AiMessage } from '../../runtime/ai/index.js'
import { PostgresConversationMemory } from '../../runtime/ai/postgres-memory.js'
import { FLEET } from '../../runtime/fleet/index.js'
import { PostgresJournalStore } from '../../runtime/fleet/postgres-journal-store.js'
import { PostgresWorkflowStore } from '../../runtime/workflows/postgres-workflow-store.js'
import { PostgresEvalRunStore } from '../../runtime/admin/postgres-eval-run-store.js'
import { GovernanceMemorySink } from '../../runtime/governance/memory-sink.js'
import { PostgresLessonStore } from '../../runtime/governance/postgres-lesson-store.js'
import { clusterArea } from '../../runtime/cluster/install.js'
import { transportArea } from '../../runtime/transport/install.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import { mcpArea } from '../../runtime/mcp/install.js'
import { aiArea } from '../../runtime/ai/install.js'
import { adminArea } from '../../runtime/admin/install.js'
import { webhooksArea } from '../../runtime/webhooks/install.js'
import { a2aArea } from '../../runtime/a2a/install.js'
import { fleetArea } from '../../runtime/fleet/install.js'
import { workflowsArea } from '../../runtime/workflows/install.js'
import { testPostgres } from '../helpers/postgres.js'
import { testRedis } from '../helpers/redis.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { call } from '../admin/helpers.js'
import { runMemoryContract } from '../ai/memory-contract.js'
import { ev, runJournalStoreSuite } from '../fleet/journal-store-suite.js'
import { runWorkflowStoreSuite } from '../workflows/workflow-store-suite.js'
import { run, runEvalStoreSuite } from '../admin/eval-store-suite.js'
import { APPROVER, EDITOR, WORKFLOW_WRITERS, addOpsFleet, incident, until } from '../workflows/workflow-fleet.js'

const pg = await testPostgres(t)

/** A pool on a fresh database of the test server, closed when `t` ends. */
async function openDb(t: Test): Promise<PostgresDb> {
  const db = await PostgresDb.open({ url: await pg!.database(t), poolSize: 4 })
  t.teardown(() => db.close())
  return db
}

if (pg !== undefined)
  t.test('the contract suites on PostgreSQL', async (t) => {
    const db = await openDb(t)
    const user = (content: string): AiMessage => ({ role: 'user', content })

    // every make() starts from empty tables: the suites share one database, one test at a time
    runMemoryContract(t, 'postgres', async (_t, max) => {
      const m = new PostgresConversationMemory(db, max)
      await m.start()
      await db.query('TRUNCATE platform_ai_memory')
      return m
    })
    runJournalStoreSuite(t, 'postgres', async (_t, max) => {
      await new PostgresJournalStore(db, max).start()
      await db.query('TRUNCATE platform_fleet_journal, platform_fleet_journal_agents')
      await db.query('UPDATE platform_fleet_journal_count SET n = 0')
      return {
        async open() {
          const s = new PostgresJournalStore(db, max)
          await s.start()
          return s
        }
      }
    })
    runWorkflowStoreSuite(t, 'postgres', async () => {
      const s = new PostgresWorkflowStore(db)
      await s.start()
      await db.query('TRUNCATE platform_workflows')
      return s
    })
    runEvalStoreSuite(t, 'postgres', async (_t, cap) => {
      const s = new PostgresEvalRunStore(db, cap)
      await s.start()
      await db.query('TRUNCATE platform_eval_runs')
      return s
    })

    t.test('postgres: any conversation id is its own key; two nodes appending at once keep the bound', async (t) => {
      const a = new PostgresConversationMemory(db, 6)
      const b = new PostgresConversationMemory(db, 6)
      await a.start()
      await a.append('x\u0000y', [user('nul')])
      await a.append('x', [user('prefix')])
      t.same(await b.read('x\u0000y'), [user('nul')])
      t.same(await b.read('x'), [user('prefix')])
      await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).append('busy', [user(`m${i}a`), user(`m${i}b`)]))
      )
      const kept = (await a.read('busy')).map((m) => m.content)
      t.equal(kept.length, 6, 'the bound holds whichever node appends')
      for (let i = 0; i < kept.length; i += 2)
        t.equal(kept[i + 1], kept[i]!.replace(/a$/, 'b'), 'each append stays whole and in order')
    })

    t.test(
      "postgres: the memory sink's facts and lessons, written on one node, read and removed on another",
      async (t) => {
        let now = 5_000_000
        const sinkOn = async () => {
          const store = new PostgresLessonStore(db)
          await store.start()
          return new GovernanceMemorySink(store, 60, 0.5, () => now)
        }
        const a = await sinkOn()
        const b = await sinkOn()
        await a.accept({
          timestamp: new Date(now).toISOString(),
          policy_name: 'p',
          policy_source: 'yaml:x',
          policy_version: '1',
          decision: 'deny',
          reason: 'because',
          evaluation_ms: 0.01,
          context_snapshot: { user_id: 'u\u0000v', session_id: 's' }
        })
        t.same(
          (await b.lessons('user:u\u0000v')).map((l) => l.text),
          ['Denied by p: because'],
          "a policy's lesson, under any subject id"
        )
        const first = await a.add('user:u', 'metric units', 'alice')
        const second = await b.add('user:u', 'short answers', 'bob')
        t.not(first.id, second.id, 'two nodes adding in the same millisecond get ids of their own')
        t.same((await b.facts('user:u')).map((f) => f.text).sort(), ['metric units', 'short answers'])
        t.equal(await b.remove('user:u', first.id), true, 'a fact added on A is removed on B')
        t.equal(await a.remove('user:u', first.id), false, 'once')
        t.same(
          (await a.recall('user:u')).map((f) => f.id),
          [second.id]
        )
        now += 61_000
        t.same(await a.recall('user:u'), [], 'facts expire with the TTL')
      }
    )

    t.test('postgres: a restarted journal store finds the events, and appends after them sort after', async (t) => {
      const first = new PostgresJournalStore(db, 100)
      await first.start()
      await db.query('TRUNCATE platform_fleet_journal, platform_fleet_journal_agents')
      await db.query('UPDATE platform_fleet_journal_count SET n = 0')
      const before = ev('CoordinationStarted', 'c-r', 1, { coordinatorName: 'ops' })
      await first.append([before])
      await first.close()
      const second = new PostgresJournalStore(db, 100)
      await second.start()
      const after = ev('AgentDispatched', 'c-r', 1, { agentName: 'a' })
      await second.append([after])
      t.same(await second.coordination('c-r'), [before, after])
    })
  })

const redis = pg === undefined ? undefined : await testRedis(t)

const AREAS = [
  clusterArea,
  transportArea,
  scopeArea,
  governanceArea,
  mcpArea,
  aiArea,
  adminArea,
  webhooksArea,
  a2aArea,
  fleetArea,
  workflowsArea
]

if (pg !== undefined && redis !== undefined)
  t.test('two nodes in cluster mode on one database share these stores by default', async (t) => {
    const url = await pg.database(t)
    const node = async (id: string): Promise<TestPlatform> => {
      const tp = await startTestPlatform(
        {
          ...WORKFLOW_WRITERS,
          'platform.admin.authorizer-roles': {
            ...WORKFLOW_WRITERS['platform.admin.authorizer-roles'],
            'evals.write': ['editor'],
            'agent_state.fact.add': ['editor']
          },
          'platform.ai.governance.memory.enabled': true,
          'platform.cluster.enabled': true,
          'platform.cluster.redis-url': redis.url,
          'platform.cluster.node-id': id,
          'platform.postgres.url': url
        },
        { install: (p) => installAreas(p, AREAS) }
      )
      t.teardown(tp.close)
      addOpsFleet(tp)
      return tp
    }
    const a = await node('node-a')
    const b = await node('node-b')

    const memory = [a, b].map((n) => n.platform.area(AI).memory)
    t.same(
      memory.map((m) => m.kind),
      ['postgres', 'postgres'],
      'conversation memory: postgres by default'
    )
    await memory[0]!.append('conv-1', [{ role: 'user', content: 'hello from a' }])
    t.same(await memory[1]!.read('conv-1'), [{ role: 'user', content: 'hello from a' }], 'written on A, read on B')

    const fact = await call(a, 'POST', '/agents/classify/facts?userId=u1', {
      token: EDITOR,
      body: { content: 'Answers in metric units' }
    })
    t.equal(fact.status, 200, fact.text)
    t.match(
      (await call(b, 'GET', '/agents/classify/facts?userId=u1', { token: EDITOR })).body,
      { enabled: true, facts: [{ id: fact.body.id, text: 'Answers in metric units' }] },
      "an operator's fact added on A is listed on B"
    )

    const journals = [a, b].map((n) => n.platform.area(FLEET).journal)
    t.same(
      journals.map((j) => (j as { kind?: string }).kind),
      ['postgres', 'postgres'],
      'the journal: postgres by default'
    )
    const started = ev('CoordinationStarted', 'c-x', 1, { coordinatorName: 'ops' })
    await journals[0]!.append([started])
    t.same(await journals[1]!.coordination('c-x'), [started], 'appended on A, read on B')

    const saved = await call(a, 'POST', '/workflow', { token: EDITOR, body: incident() })
    t.equal(saved.status, 200, saved.text)
    t.same(
      (await call(b, 'GET', '/workflow')).body.map((w: { id: string }) => w.id),
      ['incident'],
      'a workflow saved on A is listed on B'
    )
    const both = await Promise.all(
      [a, b].map((n, i) =>
        call(n, 'POST', '/workflow', { token: EDITOR, body: { ...incident(), version: 2, name: `v2 by ${i}` } })
      )
    )
    t.same(both.map((r) => r.status).sort(), [200, 409], 'two nodes saving version 2 at once: one wins')
    t.match(both.find((r) => r.status === 409)!.body, { code: 'PLT_ERR_WORKFLOW_VERSION_CONFLICT', storedVersion: 2 })
    const winner = both.findIndex((r) => r.status === 200)
    t.equal(
      (await call(a, 'GET', '/workflow/incident')).body.name,
      `v2 by ${winner}`,
      'the winner is what every node reads'
    )

    const recorded = await call(a, 'POST', '/evals/runs', { token: EDITOR, body: run('e1', 'base', 1) })
    t.equal(recorded.status, 200, recorded.text)
    t.match(
      (await call(b, 'GET', '/evals/runs/e1', { token: EDITOR })).body,
      { id: 'e1', baseline: 'base' },
      'recorded on A, read on B'
    )
    t.match((await call(b, 'GET', '/evals/baselines')).body, [{ baseline: 'base', total: 1 }])

    // a run started on A parks at its approval; B reads it and approves it; A runs it to the end
    const started202 = await call(a, 'POST', '/workflow/incident/run?coordinator=ops', {
      token: EDITOR,
      body: { input: 'fire in the lab' }
    })
    t.equal(started202.status, 202, started202.text)
    const { runId, pendingApproval } = started202.body
    t.match((await call(b, 'GET', `/workflow/runs/${runId}`, { token: EDITOR })).body, {
      status: 'WAITING_APPROVAL',
      pendingApproval: { approvalId: pendingApproval.approvalId }
    })
    t.same(
      (await call(b, 'GET', '/workflow/approvals')).body.map((x: { approvalId: string }) => x.approvalId),
      [pendingApproval.approvalId],
      "A's pending approval is listed on B"
    )
    const decided = await call(b, 'POST', `/workflow/approvals/${pendingApproval.approvalId}`, {
      token: APPROVER,
      body: { approve: true }
    })
    t.same(decided.body, { approvalId: pendingApproval.approvalId, approved: true })
    const done = await until(b, runId, (r) => r.status !== 'WAITING_APPROVAL' && r.status !== 'RUNNING')
    t.equal(done.status, 'SUCCEEDED', 'A ran the approved step and the rest; B reads the end')
    t.same((await call(a, 'GET', '/workflow/approvals')).body, [], 'decided: gone on every node')
    const again = await call(a, 'POST', `/workflow/approvals/${pendingApproval.approvalId}`, {
      token: APPROVER,
      body: { approve: false }
    })
    t.equal(again.status, 404, 'a decision is made once, wherever')
  })
