// The control audit log and the governance decision log keep at most `retention` entries in LMDB:
// every 1000 appends the oldest beyond it are removed (counted from LMDB's statistics, not a scan).
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store, entryCount } from '../../runtime/store/index.js'
import { ControlAuditLog, type AuditEntry } from '../../runtime/auth/index.js'
import { GovernanceDecisionLog, type AuditEntry as Decision } from '../../runtime/governance/index.js'

const dir = mkdtempSync(join(tmpdir(), 'retention-'))
const store = new Store(dir)
t.teardown(async () => { await store.close(); rmSync(dir, { recursive: true, force: true }) })

/** Lets the last trim's transaction land: trims run after a write, asynchronously. */
async function quiet (): Promise<void> { await new Promise((resolve) => setTimeout(resolve, 50)) }

t.test('entryCount reads the number of entries of one database', async (t) => {
  const a = store.db<number, number>('count-a')
  const b = store.db<number, number>('count-b')
  for (let i = 0; i < 1234; i++) void a.put(i, i)
  for (let i = 0; i < 7; i++) void b.put(i, i)
  await a.committed
  await b.committed
  t.equal(entryCount(a), 1234)
  t.equal(entryCount(b), 7)
})

// A trim counts what is committed when it runs and runs every 1000 appends, so the log holds between
// `retention` and `retention` + 1000 entries: the newest ones
t.test('control audit log: the oldest entries beyond the retention are removed, the newest kept', async (t) => {
  const db = store.db<AuditEntry, [number, number]>('audit-retention')
  const log = new ControlAuditLog(100, db, 1500)
  for (let i = 0; i < 5000; i++) await log.record('ops', 'plugins.reload', `t-${i}`, true)
  await quiet()
  const targets = [...db.getRange()].map(({ value }) => value.target)
  t.equal(entryCount(db), targets.length)
  t.ok(targets.length >= 1500 && targets.length <= 2500, `${targets.length} entries kept`)
  t.equal(targets.at(-1), 't-4999', 'the newest is kept')
  t.same(targets, Array.from({ length: targets.length }, (_, i) => `t-${5000 - targets.length + i}`), 'a contiguous run of the newest')
})

t.test('decision log: the oldest entries beyond the retention are removed, the newest kept', async (t) => {
  const db = store.db<Decision, [number, number]>('decisions-retention')
  const log = new GovernanceDecisionLog(100, db, 1500)
  const entry = (i: number): Decision => ({ timestamp: new Date().toISOString(), policy_name: 'p', policy_source: 'yaml:p.yaml', policy_version: '1', decision: 'admit', reason: `r-${i}`, evaluation_ms: 0, context_snapshot: {} })
  for (let i = 0; i < 5000; i++) { log.record(entry(i)); if (i % 100 === 99) await db.committed }
  await db.committed
  await quiet()
  const reasons = [...db.getRange()].map(({ value }) => value.reason)
  t.equal(entryCount(db), reasons.length)
  t.ok(reasons.length >= 1500 && reasons.length <= 2500, `${reasons.length} entries kept`)
  t.equal(reasons.at(-1), 'r-4999', 'the newest is kept')
  t.same(reasons, Array.from({ length: reasons.length }, (_, i) => `r-${5000 - reasons.length + i}`), 'a contiguous run of the newest')
})
