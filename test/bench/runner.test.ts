// The bench runner without load: figures in units of the machine, targets in units, the
// baseline's unit ratios, alternating rounds, and a suite that runs to its end when a scenario
// throws or lets an error escape. Imported from dist like the harness test (`npm test` compiles).
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const dist = (p: string) => join(ROOT, 'dist/bench', p)
const { row } = await import(dist('scenario.js'))
const { checkTargets, loadTargets } = await import(dist('lib/targets.js'))
const { ratiosOf, regressions } = await import(dist('lib/baseline.js'))
const { attachUnits, toUnits, unitFromHttpJson } = await import(dist('lib/machine-unit.js'))
const { alternate } = await import(dist('lib/rounds.js'))
const { markdown } = await import(dist('lib/report.js'))

const tmp = mkdtempSync(join(tmpdir(), 'bench-runner-test-'))
t.teardown(() => {
  rmSync(tmp, { recursive: true, force: true })
})

t.test('times divide by the unit, rates become operations per unit, memory stays absolute', async (t) => {
  t.equal(toUnits('µs', 30, 15), 2)
  t.equal(toUnits('ms', 3, 15), 200)
  t.equal(toUnits('/s', 20_000, 5), 0.1)
  t.equal(toUnits('KB', 4, 15), undefined)
  const result = {
    scenario: 'x',
    description: '',
    notes: [],
    rows: [
      row('cpu_us', 'cpu', 'µs', 'lower', 30, { peer: 60 }),
      row('rss_kb', 'rss', 'KB', 'lower', 3, {}),
      row('rate', 'rate', 'calls/s', 'higher', 10_000, {})
    ]
  }
  attachUnits(result, 15)
  t.same(result.rows[0].units, { ours: 2, peers: { peer: 4 } })
  t.equal(result.rows[1].units, undefined, 'KB has no unit figure')
  t.same(result.rows[2].units, { ours: 0.15, peers: {} })
  const http = {
    scenario: 'http-json',
    description: '',
    notes: [],
    rows: [row('cpu_us_per_req', '', 'µs', 'lower', 9, { 'uws-raw': 6 })]
  }
  t.equal(unitFromHttpJson(http), 6, "http-json's uws-raw peer is the unit")
  t.equal(unitFromHttpJson({ ...http, failed: 'boom', rows: [] }), undefined)
})

t.test(
  'targets in units pass or fail on the same code whatever the machine; a µs target on a time row fails',
  async (t) => {
    const targets = [
      { scenario: 'x', row: 'cpu_us', maxUnits: 3 },
      { scenario: 'x', row: 'rate', minUnits: 0.1 },
      { scenario: 'x', row: 'cpu_us', max: 50 },
      { scenario: 'x', row: 'rss_kb', max: 4 }
    ]
    // the same code on a machine twice as slow: every time doubles, the unit with it
    for (const [cpu, rate, unitUs] of [
      [30, 10_000, 15],
      [60, 5_000, 30]
    ] as const) {
      const result = {
        scenario: 'x',
        description: '',
        notes: [],
        rows: [
          row('cpu_us', 'cpu', 'µs', 'lower', cpu, {}),
          row('rate', 'rate', '/s', 'higher', rate, {}),
          row('rss_kb', 'rss', 'KB', 'lower', 3, {})
        ]
      }
      attachUnits(result, unitUs)
      const c = checkTargets(result, targets, unitUs)
      t.same(
        c.map((x: { pass: boolean }) => x.pass),
        [true, true, false, true],
        `unit ${unitUs} µs`
      )
      t.equal(c[0].actual, 2)
      t.match(c[0].target, `<= 3 units (${3 * unitUs} µs at ${unitUs} µs per unit)`)
      t.match(c[2].target, /must be in units/)
    }
    const noUnit = checkTargets(
      { scenario: 'x', description: '', notes: [], rows: [row('cpu_us', 'cpu', 'µs', 'lower', 1, {})] },
      targets.slice(0, 1)
    )
    t.equal(noUnit[0].pass, false, 'no unit measured: not measured, fails')
    t.throws(() => {
      const f = join(tmp, 'bad-targets.json')
      writeFileSync(f, JSON.stringify({ targets: [{ scenario: 'x', row: 'y', maxUnits: 1, max: 2 }] }))
      loadTargets(f)
    }, /exactly one of/)
    const committed = loadTargets(join(ROOT, 'bench/targets.json'))
    for (const x of committed)
      t.notOk(
        /_us$|_ms$|per_s$/.test(x.row) && (x.max !== undefined || x.min !== undefined),
        `${x.row}: no raw µs target`
      )
  }
)

t.test('bench:check gates on units as ratios: a figure that grew against the unit regresses', async (t) => {
  const run = (cpu: number, unitUs: number) => {
    const r = { scenario: 'x', description: '', notes: [], rows: [row('cpu_us', 'cpu', 'µs', 'lower', cpu, {})] }
    attachUnits(r, unitUs)
    return ratiosOf([r])
  }
  const base = { date: 'd', node: 'v20', machine: 'm', ratios: run(30, 15) }
  t.same(base.ratios, { 'x/cpu_us/machine-unit': 0.5 })
  t.same(regressions(base, run(60, 30), new Set(['x'])), [], 'a machine twice as slow is no regression')
  t.same(
    regressions(base, run(45, 15), new Set(['x'])).map((g: { key: string }) => g.key),
    ['x/cpu_us/machine-unit'],
    '50% more CPU on the same machine is'
  )
})

t.test('rounds alternate the subjects, rotate the order and keep the median round', async (t) => {
  const order: string[] = []
  const figures: Record<string, number[]> = { a: [5, 1, 3], b: [10, 30, 20], c: [7, 7, 9] }
  const r = await alternate(
    ['a', 'b', 'c'],
    3,
    async (s: string, round: number) => {
      order.push(s)
      return { v: figures[s]![round]! }
    },
    (m: { v: number }) => m.v
  )
  t.same(order, ['a', 'b', 'c', 'b', 'c', 'a', 'c', 'a', 'b'])
  t.same(
    [...r.median].map(([s, m]) => [s, m.v]),
    [
      ['a', 3],
      ['b', 20],
      ['c', 7]
    ]
  )
  t.same(
    r.all.get('a').map((m: { v: number }) => m.v),
    [5, 1, 3]
  )
  t.equal(r.info.count, 3)
  t.equal(r.info.loadAverages.length, 3)
  t.ok(r.info.loadAverages.every((x: number) => Number.isFinite(x) && x >= 0))
  await t.rejects(
    alternate(['a'], 0, async () => 1, Number),
    /rounds must be/
  )
})

// A child process, so the uncaught errors it provokes are the runner's alone (tap watches its own).
t.test('a scenario that throws or lets an error escape fails alone; the suite runs to its end', async (t) => {
  const script = join(tmp, 'suite.mjs')
  writeFileSync(
    script,
    `import { EventEmitter } from 'node:events'
import { FailureTrap, runSuite } from ${JSON.stringify(dist('lib/runner.js'))}
import { row } from ${JSON.stringify(dist('scenario.js'))}
const ok = (name) => ({ name, description: name, run: async () => ({ scenario: name, description: name, notes: [], rows: [row('cpu_us', 'cpu', 'µs', 'lower', 30, {})] }) })
const scenarios = [
  ok('first'),
  { name: 'throws', description: '', run: async () => { throw new Error('boom: the scenario threw') } },
  // an idle pg client of a pool without an error listener, when its server stops
  { name: 'error-event', description: '', run: () => new Promise(() => { setImmediate(() => new EventEmitter().emit('error', new Error('Connection terminated unexpectedly'))) }) },
  { name: 'rejection', description: '', run: () => new Promise(() => { Promise.reject(new Error('nobody awaited this')) }) },
  ok('last')
]
const trap = new FailureTrap()
trap.install()
let cleanups = 0
let measured = 0
const { results, unit } = await runSuite(scenarios, {
  quick: true, durationSec: 1, warmupSec: 0, root: '.', log: () => {}, signal: new AbortController().signal,
  targets: [{ scenario: 'first', row: 'cpu_us', maxUnits: 2 }, { scenario: 'last', row: 'cpu_us', maxUnits: 3 }],
  trap, afterFailure: () => { cleanups++ },
  // the run's unit first, then the one measured right before 'last'
  measureUnit: async () => (++measured === 1 ? [16, 14, 15] : [11, 10, 9])
})
setImmediate(() => new EventEmitter().emit('error', new Error('late')))
await new Promise((r) => setTimeout(r, 20))
console.log(JSON.stringify({ results, unit, cleanups, measured, stray: trap.stray }))
`
  )
  const out = spawnSync(process.execPath, ['--no-node-snapshot', script], { encoding: 'utf8', timeout: 60_000 })
  if (out.status !== 0) t.comment(out.stderr)
  t.equal(out.status, 0, 'the run ends normally')
  const j = JSON.parse(out.stdout.trim().split('\n').at(-1)!)
  t.same(
    j.results.map((r: { scenario: string; failed?: string }) => [r.scenario, r.failed ?? 'ok']),
    [
      ['first', 'ok'],
      ['throws', 'boom: the scenario threw'],
      ['error-event', 'Connection terminated unexpectedly'],
      ['rejection', 'nobody awaited this'],
      ['last', 'ok']
    ]
  )
  t.equal(j.cleanups, 3, 'each failed scenario had its processes stopped')
  t.same(
    j.unit,
    { us: 15, source: 'measured', loadAverage: j.unit.loadAverage, samples: [16, 14, 15] },
    'the median window'
  )
  t.equal(j.measured, 2, 'measured for the run, then again only before the later scenario with targets in units')
  const [first, last] = [j.results[0], j.results[4]]
  t.equal(first.unit.us, 15, 'a unit measured just before the first scenario is its own')
  t.equal(first.unit.source, 'before-scenario')
  t.same(first.rows[0].units, { ours: 2, peers: {} })
  t.same(last.unit.samples, [11, 10, 9])
  t.same(last.rows[0].units, { ours: 3, peers: {} }, 'divided by the unit measured right before it')
  t.equal(last.checks[0].pass, true)
  t.equal(j.results[1].unit, undefined, "a scenario without targets in units uses the run's unit")
  t.same(j.stray, ['late'], 'an error between scenarios is kept, not fatal')
  const md = markdown({
    date: 'd',
    mode: 'quick',
    command: 'c',
    machine: { cpu: 'cpu', cores: 2, memoryGb: 4, kernel: 'Linux', node: 'v20', loadTool: 'wrk' },
    unit: j.unit,
    results: j.results
  })
  t.match(md, '**1 unit = 15 µs**')
  t.match(md, '**Failed: `throws`, `error-event`, `rejection`** (the others ran).')
  t.match(md, '**Failed**: boom: the scenario threw')
  t.match(md, '| cpu | µs | 30 | 3 |')
  t.match(md, 'Its figures in units use **1 unit = 10 µs**, measured right before it (median of 11, 10, 9 µs')
})

t.test('a scenario that misses a target runs once more; the run with fewer misses is reported', async (t) => {
  const { FailureTrap, runSuite } = await import(dist('lib/runner.js'))
  const runs: Record<string, number> = {}
  // each run's figure in µs, one per run, at 10 µs a unit: over 30 misses the 3-unit target
  const scenario = (name: string, figures: (number | Error)[]) => ({
    name,
    description: name,
    run: async () => {
      const f = figures[runs[name]!++]!
      if (f instanceof Error) throw f
      return { scenario: name, description: name, notes: [], rows: [row('cpu_us', 'cpu', 'µs', 'lower', f, {})] }
    }
  })
  const names = ['steady', 'flaky', 'slow', 'second-throws']
  for (const n of names) runs[n] = 0
  let unitsMeasured = 0
  const suite = (remeasure?: boolean) => ({
    quick: true,
    durationSec: 1,
    warmupSec: 0,
    root: '.',
    log: () => {},
    signal: new AbortController().signal,
    targets: names.map((scenario) => ({ scenario, row: 'cpu_us', maxUnits: 3 })),
    trap: new FailureTrap(),
    measureUnit: async () => {
      unitsMeasured++
      return [10, 10, 10]
    },
    ...(remeasure === undefined ? {} : { remeasure })
  })
  const { results } = await runSuite(
    [
      scenario('steady', [20]),
      scenario('flaky', [50, 25]),
      scenario('slow', [40, 45]),
      scenario('second-throws', [40, new Error('boom')])
    ],
    suite()
  )
  t.same(runs, { steady: 1, flaky: 2, slow: 2, 'second-throws': 2 }, 'only a scenario with a miss runs again')
  t.equal(unitsMeasured, 7, "the run's unit serves the first scenario, a fresh one every later run (a second too)")
  const [steady, flaky, slow, throws] = results
  t.equal(steady.remeasured, undefined)
  t.equal(flaky.rows[0].ours, 25, "the second run's figures, whole")
  t.equal(flaky.checks[0].pass, true)
  t.same(flaky.remeasured, {
    kept: 'second',
    first: [{ row: 'cpu_us', target: flaky.remeasured.first[0].target, actual: 5 }],
    second: []
  })
  t.equal(slow.rows[0].ours, 40, 'missed both times: the first run stays')
  t.equal(slow.checks[0].pass, false, 'a miss that reproduces is a miss')
  t.same(
    slow.remeasured.second.map((m: { actual: number }) => m.actual),
    [4.5]
  )
  t.equal(throws.failed, undefined, 'a second run that throws leaves the first reported')
  t.equal(throws.remeasured.secondFailed, 'boom')
  const md = markdown({
    date: 'd',
    mode: 'quick',
    command: 'c',
    machine: { cpu: 'cpu', cores: 2, memoryGb: 4, kernel: 'Linux', node: 'v20', loadTool: 'wrk' },
    results
  })
  t.match(md, '**Targets: 2 of 4 met.** Run twice after a miss: `flaky`, `slow`, `second-throws`')
  t.match(md, 'Missed in the first: `cpu_us` 5; in the second none. The figures above are the second run')
  t.match(md, 'in the second failed (boom)')

  runs.skipped = 0
  const skipped = await runSuite(
    [
      {
        name: 'skipped',
        description: '',
        run: async () => {
          runs.skipped!++
          return { scenario: 'skipped', description: '', notes: [], rows: [], skipped: 'no such peer here' }
        }
      }
    ],
    { ...suite(), targets: [{ scenario: 'skipped', row: 'cpu_us', maxUnits: 3 }] }
  )
  t.equal(runs.skipped, 1, 'a skipped scenario misses its targets but is not run again')
  t.equal(skipped.results[0].remeasured, undefined)

  for (const n of names) runs[n] = 0
  const once = await runSuite([scenario('flaky', [50, 25])], suite(false))
  t.equal(runs.flaky, 1, '--once: no second run')
  t.equal(once.results[0].checks[0].pass, false)
  t.equal(once.results[0].remeasured, undefined)
})
