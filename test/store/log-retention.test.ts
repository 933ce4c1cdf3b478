// The control audit log and the governance decision log keep at most `retention` entries in LMDB:
// every 1000 appends the oldest whole pages beyond it are removed (counted from the keys' sequence
// numbers, not a scan).
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store } from '../../runtime/store/index.js'
import { entryCount } from '../helpers/entry-count.js'
import { entriesOf } from '../../runtime/store/log-page.js'
import { ControlAuditLog } from '../../runtime/auth/index.js'
import type { ControlAuditEntry, DecisionEntry as Decision } from '../../runtime/contracts/index.js'
import { GovernanceDecisionLog } from '../../runtime/governance/index.js'

const dir = mkdtempSync(join(tmpdir(), 'retention-'))
const store = new Store(dir)
t.teardown(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Every entry stored in a log's database, oldest first: values are pages of entries. */
function storedEntries<T>(db: { getRange(): Iterable<{ value: unknown }> }): T[] {
  return [...db.getRange()].flatMap(({ value }) => entriesOf<T>(value, undefined))
}

/** The log holds a contiguous run of the newest of 5000 entries labelled `<prefix><i>`, within the bounds. */
function keptNewest(t: Test, count: number, labels: string[], prefix: string): void {
  t.equal(count, labels.length)
  t.ok(labels.length >= 1500 && labels.length <= 2500, `${labels.length} entries kept`)
  t.equal(labels.at(-1), `${prefix}4999`, 'the newest is kept')
  t.same(
    labels,
    Array.from({ length: labels.length }, (_, i) => `${prefix}${5000 - labels.length + i}`),
    'a contiguous run of the newest'
  )
}

/** Lets the last trim land: a trim runs once a page is committed, and its removals are written after it. */
async function quiet(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50))
}

// A trim counts what is committed when it runs and runs every 1000 appends, so the log holds between
// `retention` and `retention` + 1000 entries (+ one page): the newest ones
t.test('control audit log: the oldest entries beyond the retention are removed, the newest kept', async (t) => {
  const db = store.db<ControlAuditEntry, [number, number]>('audit-retention')
  const log = new ControlAuditLog(100, db, 1500)
  for (let i = 0; i < 5000; i++) await log.record('ops', 'plugins.reload', `t-${i}`, true)
  await quiet()
  const kept = storedEntries<ControlAuditEntry>(db)
  keptNewest(
    t,
    kept.length,
    kept.map((e) => e.target),
    't-'
  )
})

t.test('decision log: the oldest entries beyond the retention are removed, the newest kept', async (t) => {
  const db = store.db<Decision, [number, number]>('decisions-retention')
  const log = new GovernanceDecisionLog(100, db, 1500)
  const entry = (i: number): Decision => ({
    timestamp: new Date().toISOString(),
    policy_name: 'p',
    policy_source: 'yaml:p.yaml',
    policy_version: '1',
    decision: 'admit',
    reason: `r-${i}`,
    evaluation_ms: 0,
    context_snapshot: {}
  })
  for (let i = 0; i < 5000; i++) {
    log.record(entry(i))
    if (i % 100 === 99) await db.committed
  }
  await db.committed
  await quiet()
  const kept = storedEntries<Decision>(db)
  t.ok(entryCount(db) < kept.length / 10, `${kept.length} entries in ${entryCount(db)} pages`)
  keptNewest(
    t,
    kept.length,
    kept.map((e) => e.reason),
    'r-'
  )
})
