import { join } from 'node:path'
import { open } from 'lmdb'
import { row, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { Store } from '../../runtime/store/index.js'
import { ControlAuditLog, type AuditEntry } from '../../runtime/auth/index.js'
import { cpuSecondsOf } from '../lib/proc.js'

interface Measured { appendsPerSec: number, cpuUsPerAppend: number, serialCommitsPerSec: number, serialP50Ms: number, serialP99Ms: number }

/**
 * Durable appends on LMDB (issue 6): the control audit log (`ControlAuditLog.record`, ring buffer +
 * LMDB, resolves once committed) through our Store, against raw lmdb-js `put` of the same entry
 * with lmdb's default durable commits. Two shapes: a burst with many appends in flight (lmdb
 * batches them into few commits) and one append awaited at a time (one commit each).
 * Runs in the harness process; CPU is the harness process's (lmdb commits on its own thread).
 */
const scenario: Scenario = {
  name: 'durable-writes',
  description: 'Durable LMDB appends: control audit log (Store + ControlAuditLog.record) vs raw lmdb-js put, burst and one-at-a-time',
  async run (opts: RunOptions): Promise<ScenarioResult> {
    const burst = opts.quick ? 20_000 : 100_000
    const serial = opts.quick ? 300 : 2000
    const entry = (i: number): AuditEntry => ({ timestamp: new Date().toISOString(), principal: 'bench', action: 'plugins.reload', target: `plugin-${i % 100}`, success: true, message: '' })

    // ours: the audit log on a Store, as the platform wires it
    const store = new Store(join(opts.tmpDir, 'ours'))
    let ours: Measured
    try {
      const audit = new ControlAuditLog(1000, store.db<AuditEntry, [number, number]>('audit'), burst * 10)
      ours = await measure((i) => audit.record('bench', 'plugins.reload', `plugin-${i % 100}`, true), burst, serial)
    } finally {
      await store.close()
    }

    // peer: raw lmdb-js, same entry shape and key, default (durable) commit settings
    const root = open({ path: join(opts.tmpDir, 'raw'), maxDbs: 4, compression: false })
    let raw: Measured
    try {
      const db = root.openDB<AuditEntry, [number, number]>({ name: 'audit', encoding: 'msgpack' })
      let seq = 0
      raw = await measure((i) => db.put([Date.now(), seq++], entry(i)).then(() => undefined), burst, serial)
    } finally {
      await root.close()
    }
    opts.log(`  audit log: ${Math.round(ours.appendsPerSec)} appends/s burst, ${Math.round(ours.serialCommitsPerSec)} commits/s one at a time (p99 ${ours.serialP99Ms.toFixed(2)} ms)`)
    opts.log(`  raw lmdb : ${Math.round(raw.appendsPerSec)} appends/s burst, ${Math.round(raw.serialCommitsPerSec)} commits/s one at a time (p99 ${raw.serialP99Ms.toFixed(2)} ms)`)
    const peer = (f: (m: Measured) => number) => ({ 'lmdb-raw': f(raw) })
    return {
      scenario: 'durable-writes',
      description: this.description,
      rows: [
        row('audit.appends_per_s', 'audit appends/s (burst)', '/s', 'higher', ours.appendsPerSec, peer((m) => m.appendsPerSec), false),
        row('audit.cpu_us_per_append', 'CPU per append (burst)', 'µs', 'lower', ours.cpuUsPerAppend, peer((m) => m.cpuUsPerAppend)),
        row('audit.serial_commits_per_s', 'audit commits/s (one at a time)', '/s', 'higher', ours.serialCommitsPerSec, peer((m) => m.serialCommitsPerSec), false),
        row('audit.serial_p99_ms', 'commit latency p99 (one at a time)', 'ms', 'lower', ours.serialP99Ms, peer((m) => m.serialP99Ms), false)
      ],
      notes: [
        `burst: ${burst} appends issued at once, awaited together; one at a time: ${serial} appends, each awaited (a durable commit each); disk: ${opts.tmpDir.split('/').slice(0, 2).join('/')}`,
        'decision-log appends join this scenario when the governance decision log is merged'
      ],
      details: { ours, raw }
    }
  }
}

async function measure (append: (i: number) => Promise<void>, burst: number, serial: number): Promise<Measured> {
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
    cpuUsPerAppend: cpu * 1e6 / burst,
    serialCommitsPerSec: serial / serialSec,
    serialP50Ms: lat[Math.floor(lat.length * 0.5)]!,
    serialP99Ms: lat[Math.min(lat.length - 1, Math.ceil(lat.length * 0.99) - 1)]!
  }
}

export default scenario
