import { runBenchScript } from '../lib/proc.js'
import { row, type ResultRow, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'

/**
 * Governance: the script bench/governance.ts, run as a
 * child process and read back from the markdown tables it prints: in-process evaluation p50/p99 of
 * `rules:` documents with 1, 10 and 100 rules and of a 12-policy chain (bare, and through the
 * admission gate with decision log), and `POST /api/admin/governance/check` against a plain JSON
 * route of ours in the same run (its peer).
 */
const scenario: Scenario = {
  name: 'governance',
  description:
    'Governance: policy evaluation p50/p99 (1, 10, 100 rules; 12-policy chain, bare and through the admission gate) and /check over HTTP vs a plain JSON route (bench/governance.ts)',
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const out = await runBenchScript(opts.root, 'governance', opts.quick ? ['--quick'] : [], opts.signal)
    const cells = (prefix: string): number[] | undefined => {
      const line = out.split('\n').find((l) => l.startsWith(`| ${prefix}`))
      return line
        ?.split('|')
        .slice(2, -1)
        .map((c) => Number(c.trim()))
    }
    const rows: ResultRow[] = []
    for (const [id, label, prefix] of [
      ['rules1', '1-rule document', 'rules document, 1 rule |'],
      ['rules10', '10-rule document', 'rules document, 10 rules'],
      ['rules100', '100-rule document', 'rules document, 100 rules'],
      ['chain12', '12-policy chain, bare evaluate', '12-policy native chain'],
      ['gate12', '12-policy chain through the admission gate', '12-policy chain through']
    ] as const) {
      const c = cells(prefix)
      rows.push(row(`${id}.p50_us`, `${label}: p50`, 'µs', 'lower', c?.[0], {}, false))
      rows.push(row(`${id}.p99_us`, `${label}: p99`, 'µs', 'lower', c?.[1], {}, false))
    }
    const plain = cells('POST /bench/plain')
    const check = cells('POST /api/admin/governance/check')
    rows.push(
      row(
        'check.rps',
        '/check requests/s (13-policy chain) vs a plain JSON POST route',
        'req/s',
        'higher',
        check?.[0],
        plain === undefined ? {} : { 'plain-route': plain[0]! },
        false
      )
    )
    rows.push(
      row(
        'check.p99_ms',
        '/check p99 latency vs the plain route',
        'ms',
        'lower',
        check?.[2],
        plain === undefined ? {} : { 'plain-route': plain[2]! },
        false
      )
    )
    opts.log(
      out
        .split('\n')
        .filter((l) => l.startsWith('|') || /MET|MISSED/.test(l))
        .map((l) => '  ' + l)
        .join('\n')
    )
    return {
      scenario: 'governance',
      description: this.description,
      rows,
      notes: [
        'figures from `node --no-node-snapshot dist/bench/governance.js' +
          (opts.quick ? ' --quick' : '') +
          '` (in-process evaluation; HTTP load from autocannon in a worker thread, 32 connections, alternating rounds)',
        'not gated by bench:check: the evaluation percentiles are absolute times (checked against the target instead), and the /check ratio is a Node-client figure'
      ]
    }
  }
}

export default scenario
