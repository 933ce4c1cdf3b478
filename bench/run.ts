import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { SCENARIOS } from './scenarios/index.js'
import { killAll } from './lib/proc.js'
import { findWrk } from './lib/http-load.js'
import { loadTargets } from './lib/targets.js'
import { FailureTrap, runSuite } from './lib/runner.js'
import { measureUnit } from './lib/machine-unit.js'
import { describeMachine, markdown, ratioChart, type Report } from './lib/report.js'
import { ratiosOf, regressions, type Baseline } from './lib/baseline.js'

const USAGE = `Usage: npm run bench -- [options]   (node --no-node-snapshot dist/bench/run.js)

  --quick              the short suite (about 6 minutes on 2 cores)
  --scenario NAME      run only this scenario (repeatable); --list shows the names
  --duration S         measured seconds per subject (default 10, quick 4)
  --warmup S           warm-up seconds per subject (default 3, quick 1)
  --rounds N           alternating rounds per subject where a scenario compares subjects;
                       the median round is kept and the load average of each is reported
                       (default: each scenario's own, mostly 1 quick and 3 full)
  --once               a scenario that misses a target is not run again (by default it runs once
                       more and the run with fewer misses is reported, both runs' misses listed)
  --check              compare ratios with bench/results/baseline.json; exit 1 when one fell > 20%
  --write-baseline     write the ratios of this run to bench/results/baseline.json
  --out DIR            where latest.md/.json and ratios.svg go (default bench/results)
  --list               list the scenarios
  -h, --help

Environment: BENCH_LOAD=autocannon forces autocannon even when wrk is installed.`

// dist/bench/run.js → repository root
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      scenario: { type: 'string', multiple: true },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      once: { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
      'write-baseline': { type: 'boolean', default: false },
      out: { type: 'string' },
      list: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false }
    }
  })
  if (values.help) {
    console.log(USAGE)
    return 0
  }
  if (values.list) {
    for (const s of SCENARIOS) console.log(`${s.name.padEnd(16)} ${s.description}`)
    return 0
  }
  const quick = values.quick === true
  const names = values.scenario ?? []
  for (const n of names)
    if (!SCENARIOS.some((s) => s.name === n)) {
      console.error(`unknown scenario '${n}'; --list shows the names`)
      return 2
    }
  const chosen = names.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => names.includes(s.name))
  const targets = loadTargets(join(ROOT, 'bench/targets.json'))
  const outDir = resolve(values.out ?? join(ROOT, 'bench/results'))
  mkdirSync(outDir, { recursive: true })

  const ac = new AbortController()
  const onSignal = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) {
      killAll()
      process.exit(130)
    }
    console.error(`\n${sig}: stopping (again to force)`)
    ac.abort()
    killAll()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  const rounds = values.rounds === undefined ? undefined : Number(values.rounds)
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds >= 1 && rounds <= 20)) {
    console.error(`--rounds takes a whole number from 1 to 20, got '${values.rounds}'`)
    return 2
  }
  const wrk = findWrk()
  const durationSec = Number(values.duration ?? (quick ? 4 : 10))
  const warmupSec = Number(values.warmup ?? (quick ? 1 : 3))
  const command = `npm run bench --${quick ? ' --quick' : ''}${rounds === undefined ? '' : ` --rounds ${rounds}`}${names.map((n) => ` --scenario ${n}`).join('')}${values.once === true ? ' --once' : ''}`
  console.log(
    `bench: ${chosen.length} scenario(s), ${quick ? 'quick' : 'full'}, ${durationSec} s measured + ${warmupSec} s warm-up per subject, HTTP load by ${wrk ?? 'autocannon (install wrk for honest uWS figures)'}`
  )

  const trap = new FailureTrap()
  trap.install()
  const suite = {
    quick,
    durationSec,
    warmupSec,
    root: ROOT,
    log: (m: string) => {
      console.log(m)
    },
    signal: ac.signal,
    ...(rounds === undefined ? {} : { rounds }),
    targets,
    trap,
    // a failed scenario's finally blocks may never run: its servers must not outlive it
    afterFailure: killAll,
    remeasure: values.once !== true,
    measureUnit: () => measureUnit(ROOT, ac.signal)
  }
  const started = performance.now()
  const { results, unit, unitError } = await runSuite(chosen, suite)
  if (ac.signal.aborted) {
    console.error('bench: interrupted, no report written')
    return 130
  }

  const rep: Report = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    command,
    machine: describeMachine(wrk),
    ...(unit === undefined ? {} : { unit }),
    ...(unitError === undefined ? {} : { unitError }),
    ...(trap.stray.length === 0 ? {} : { strayErrors: trap.stray }),
    results
  }
  writeFileSync(join(outDir, 'latest.json'), JSON.stringify(rep, null, 2) + '\n')
  writeFileSync(join(outDir, 'latest.md'), markdown(rep))
  writeFileSync(join(outDir, 'ratios.svg'), ratioChart(rep, targets))
  console.log(
    `\nbench: done in ${((performance.now() - started) / 1000).toFixed(0)} s; report ${join(outDir, 'latest.md')}, chart ratios.svg, raw latest.json`
  )

  const baselineFile = join(ROOT, 'bench/results/baseline.json')
  const now = ratiosOf(results)
  if (values['write-baseline'] === true) {
    // scenarios not run this time keep their baseline ratios
    const ran = new Set(results.filter((r) => r.skipped === undefined && r.failed === undefined).map((r) => r.scenario))
    const kept = existsSync(baselineFile) ? (JSON.parse(readFileSync(baselineFile, 'utf8')) as Baseline).ratios : {}
    const ratios = Object.fromEntries([
      ...Object.entries(kept).filter(([k]) => !ran.has(k.split('/')[0]!)),
      ...Object.entries(now)
    ])
    const b: Baseline = {
      date: rep.date,
      node: rep.machine.node,
      machine: `${rep.machine.cpu}, ${rep.machine.cores} cores`,
      ratios
    }
    writeFileSync(baselineFile, JSON.stringify(b, null, 2) + '\n')
    console.log(
      `bench: baseline written (${Object.keys(now).length} ratios from this run, ${Object.keys(ratios).length} in all)`
    )
  }
  if (values.check === true) {
    if (!existsSync(baselineFile)) {
      console.error('bench:check: no bench/results/baseline.json (write one with --quick --write-baseline)')
      return 1
    }
    const base = JSON.parse(readFileSync(baselineFile, 'utf8')) as Baseline
    // a failed scenario counts as run: its ratios are missing, which fails the check
    const ran = new Set(results.filter((r) => r.skipped === undefined).map((r) => r.scenario))
    let regs = regressions(base, now, ran)
    if (regs.length > 0 && !ac.signal.aborted) {
      // a regression must reproduce: run the scenarios concerned once more and keep each ratio's better value
      const again = new Set(regs.map((g) => g.key.split('/')[0]!))
      console.log(
        `\nbench:check: ${regs.length} ratio(s) below the baseline; running ${[...again].join(', ')} once more to confirm`
      )
      const best = { ...now }
      for (const s of chosen.filter((x) => again.has(x.name))) {
        // through the suite, so a scenario with targets in units measures its own unit again; this
        // run is itself the repeat, so a missed target does not add another
        const [r] = (await runSuite([s], { ...suite, remeasure: false })).results
        if (ac.signal.aborted || r === undefined) break
        for (const [k, v] of Object.entries(ratiosOf([r]))) best[k] = Math.max(best[k] ?? 0, v)
      }
      regs = regressions(base, best, ran)
    }
    if (regs.length > 0) {
      console.error(
        `bench:check: ${regs.length} ratio(s) regressed more than 20% against the baseline of ${base.date}:`
      )
      for (const g of regs)
        console.error(
          `  ${g.key}: ${g.baseline.toFixed(2)}x → ${g.now === undefined ? 'not measured' : `${g.now.toFixed(2)}x (${(g.change * 100).toFixed(0)}%)`}`
        )
      return 1
    }
    console.log(
      `bench:check: no ratio regressed more than 20% against the baseline of ${base.date} (${Object.keys(base.ratios).length} ratios)`
    )
  }
  return 0
}

main().then(
  (code) => {
    killAll()
    process.exit(code)
  },
  (err) => {
    console.error(err)
    killAll()
    process.exit(1)
  }
)
