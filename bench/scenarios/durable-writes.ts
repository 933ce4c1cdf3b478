import { join } from 'node:path'
import { open } from 'lmdb'
import { row, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { Store } from '../../runtime/store/index.js'
import { ControlAuditLog } from '../../runtime/auth/index.js'
import type { ControlAuditEntry, DecisionEntry } from '../../runtime/contracts/index.js'
import { GovernanceDecisionLog } from '../../runtime/governance/index.js'
import { cpuSecondsOf } from '../lib/proc.js'

interface Measured {
  appendsPerSec: number
  cpuUsPerAppend: number
  serialCommitsPerSec: number
  serialP50Ms: number
  serialP99Ms: number
}

/**
 * Durable appends on LMDB: the control audit log (`ControlAuditLog.record`, ring buffer +
 * LMDB, resolves once committed) and the governance decision log (`GovernanceDecisionLog.record`,
 * ring buffer + LMDB, fire-and-forget: an append counts once the database's `committed` promise
 * after it resolves) through our Store, each against raw lmdb-js `put` of the same entry with
 * lmdb's default durable commits. Two shapes: a burst with many appends in flight (lmdb batches
 * them into few commits) and one append awaited at a time (one commit each).
 * Runs in the harness process; CPU is the harness process's (lmdb commits on its own thread).
 */
const scenario: Scenario = {
  name: 'durable-writes',
  description:
    'Durable LMDB appends: control audit log and governance decision log (Store + record) vs raw lmdb-js put of the same entries, burst and one-at-a-time',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const burst = opts.quick ? 20_000 : 100_000
    const serial = opts.quick ? 300 : 2000
    const entry = (i: number): ControlAuditEntry => ({
      timestamp: new Date().toISOString(),
      principal: 'bench',
      action: 'plugins.reload',
      target: `plugin-${i % 100}`,
      success: true,
      message: ''
    })
    // a deny as the gate records it: the snapshot is what makes decision entries bigger
    const decision = (i: number): DecisionEntry => ({
      timestamp: new Date().toISOString(),
      policy_name: 'deny-list',
      policy_source: 'yaml:policies/base.yaml',
      policy_version: '1.0',
      decision: 'deny',
      reason: 'blocked term',
      evaluation_ms: 0.004,
      context_snapshot: {
        phase: 'pre_admission',
        message: `call_tool:search ${i}`,
        user_id: 'u-1',
        session_id: 's-1',
        agent_id: 'support',
        model: null
      }
    })

    // each log measured next to its raw peer, in its own directories: ours through a Store as the
    // platform wires it, the peer as raw lmdb-js with the same entry shape and key, default durable commits
    const ours = async (name: string, append: (store: Store) => (i: number) => Promise<void>): Promise<Measured> => {
      const store = new Store(join(opts.tmpDir, `ours-${name}`))
      try {
        return await measure(append(store), burst, serial)
      } finally {
        await store.close()
      }
    }
    const raw = async <V>(name: string, make: (i: number) => V): Promise<Measured> => {
      const root = open({ path: join(opts.tmpDir, `raw-${name}`), maxDbs: 4, compression: false })
      try {
        const db = root.openDB<V, [number, number]>({ name, encoding: 'msgpack' })
        let seq = 0
        return await measure((i) => db.put([Date.now(), seq++], make(i)).then(() => undefined), burst, serial)
      } finally {
        await root.close()
      }
    }
    const oursAudit = await ours('audit', (store) => {
      const audit = new ControlAuditLog(1000, store.db<ControlAuditEntry, [number, number]>('audit'), burst * 10)
      return (i) => audit.record('bench', 'plugins.reload', `plugin-${i % 100}`, true)
    })
    const rawAudit = await raw('audit', entry)
    const oursDecisions = await ours('decisions', (store) => {
      const db = store.db<DecisionEntry, [number, number]>('decisions')
      const log = new GovernanceDecisionLog(1000, db, burst * 10)
      return async (i) => {
        log.record(decision(i))
        // the log writes its page at the end of this microtask run: let it queue, then wait for it
        await Promise.resolve()
        await db.committed
      }
    })
    const rawDecisions = await raw('decisions', decision)
    const line = (who: string, m: Measured): void => {
      opts.log(
        `  ${who}: ${Math.round(m.appendsPerSec)} appends/s burst, ${Math.round(m.serialCommitsPerSec)} commits/s one at a time (p99 ${m.serialP99Ms.toFixed(2)} ms)`
      )
    }
    line('audit log', oursAudit)
    line('raw lmdb ', rawAudit)
    line('decisions', oursDecisions)
    line('raw lmdb ', rawDecisions)
    const peer = (f: (m: Measured) => number) => ({ 'lmdb-raw': f(rawAudit) })
    const dpeer = (f: (m: Measured) => number) => ({ 'lmdb-raw': f(rawDecisions) })
    return {
      scenario: 'durable-writes',
      description: this.description,
      rows: [
        row(
          'audit.appends_per_s',
          'audit appends/s (burst)',
          '/s',
          'higher',
          oursAudit.appendsPerSec,
          peer((m) => m.appendsPerSec),
          false
        ),
        row(
          'audit.cpu_us_per_append',
          'CPU per append (burst)',
          'µs',
          'lower',
          oursAudit.cpuUsPerAppend,
          peer((m) => m.cpuUsPerAppend)
        ),
        row(
          'audit.serial_commits_per_s',
          'audit commits/s (one at a time)',
          '/s',
          'higher',
          oursAudit.serialCommitsPerSec,
          peer((m) => m.serialCommitsPerSec),
          false
        ),
        row(
          'audit.serial_p99_ms',
          'commit latency p99 (one at a time)',
          'ms',
          'lower',
          oursAudit.serialP99Ms,
          peer((m) => m.serialP99Ms),
          false
        ),
        row(
          'decisions.appends_per_s',
          'decision-log appends/s (burst)',
          '/s',
          'higher',
          oursDecisions.appendsPerSec,
          dpeer((m) => m.appendsPerSec),
          false
        ),
        row(
          'decisions.cpu_us_per_append',
          'decision-log CPU per append (burst)',
          'µs',
          'lower',
          oursDecisions.cpuUsPerAppend,
          dpeer((m) => m.cpuUsPerAppend),
          false
        ),
        row(
          'decisions.serial_commits_per_s',
          'decision-log commits/s (one at a time)',
          '/s',
          'higher',
          oursDecisions.serialCommitsPerSec,
          dpeer((m) => m.serialCommitsPerSec),
          false
        ),
        row(
          'decisions.serial_p99_ms',
          'decision-log commit latency p99 (one at a time)',
          'ms',
          'lower',
          oursDecisions.serialP99Ms,
          dpeer((m) => m.serialP99Ms),
          false
        )
      ],
      notes: [
        `burst: ${burst} appends issued at once, awaited together; one at a time: ${serial} appends, each awaited (a durable commit each); disk: ${opts.tmpDir.split('/').slice(0, 2).join('/')}`,
        'the decision log records without waiting (a turn never waits on the disk); here an append is done when the commit after it resolves'
      ],
      details: { ours: oursAudit, raw: rawAudit, oursDecisions, rawDecisions }
    }
  }
}

async function measure(append: (i: number) => Promise<void>, burst: number, serial: number): Promise<Measured> {
  // warm-up: open the database files and JIT the paths
  await Promise.all(Array.from({ length: 2000 }, (_, i) => append(i)))
  const c0 = cpuSecondsOf('self')
  const t0 = performance.now()
  const ps: Promise<void>[] = new Array(burst)
  for (let i = 0; i < burst; i++) ps[i] = append(i)
  await Promise.all(ps)
  const burstSec = (performance.now() - t0) / 1000
  const cpu = cpuSecondsOf('self') - c0
  const lat: number[] = []
  const s0 = performance.now()
  for (let i = 0; i < serial; i++) {
    const t = performance.now()
    await append(i)
    lat.push(performance.now() - t)
  }
  const serialSec = (performance.now() - s0) / 1000
  lat.sort((a, b) => a - b)
  return {
    appendsPerSec: burst / burstSec,
    cpuUsPerAppend: (cpu * 1e6) / burst,
    serialCommitsPerSec: serial / serialSec,
    serialP50Ms: lat[Math.floor(lat.length * 0.5)]!,
    serialP99Ms: lat[Math.min(lat.length - 1, Math.ceil(lat.length * 0.99) - 1)]!
  }
}

export default scenario
