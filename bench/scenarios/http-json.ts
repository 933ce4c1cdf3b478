import { row, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { startPeer, startPlatform, type ServerProcess } from '../lib/proc.js'
import { findWrk, httpLoad, measureHttp, type MeasuredHttp } from '../lib/http-load.js'
import { alternate, roundsOf } from '../lib/rounds.js'

const CONNECTIONS = 100
const PATH = '/healthz'

/**
 * Small JSON GET: our `/healthz` (router, Context, request id, metrics) against a raw
 * uWebSockets.js hello world and node:http answering the same body, same load generator, same run.
 * Subjects alternate within each round and the order rotates between rounds (uWS A/B practice);
 * the figure per subject is its median round by requests/s.
 */
const scenario: Scenario = {
  name: 'http-json',
  description: `Small JSON GET (\`${PATH}\`, {"status":"UP"}), ${CONNECTIONS} keep-alive connections: platform vs raw uWebSockets.js vs node:http`,
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const rounds = roundsOf(opts, opts.quick ? 1 : 3)
    const servers: ServerProcess[] = []
    try {
      servers.push(await startPlatform(opts.root, opts.tmpDir))
      servers.push(await startPeer(opts.root, 'uws-raw.js'))
      servers.push(await startPeer(opts.root, 'node-http.js'))
      const byName = new Map(servers.map((s) => [s.name, s]))
      const measured = await alternate(
        servers.map((s) => s.name),
        rounds,
        async (name, r) => {
          const s = byName.get(name)!
          await httpLoad({
            url: s.url + PATH,
            connections: CONNECTIONS,
            durationSec: opts.warmupSec,
            root: opts.root,
            signal: opts.signal
          })
          const m = await measureHttp(s, {
            path: PATH,
            connections: CONNECTIONS,
            durationSec: opts.durationSec,
            root: opts.root,
            signal: opts.signal
          })
          opts.log(
            `  ${s.name.padEnd(10)} round ${r + 1}/${rounds}: ${Math.round(m.rps)} req/s, p50 ${m.p50Ms.toFixed(2)} ms, p99 ${m.p99Ms.toFixed(2)} ms, ${m.cpuUsPerReq.toFixed(1)} CPU µs/req (${(m.cpuCores * 100).toFixed(0)}% CPU)${m.errors > 0 ? `, ${m.errors} errors` : ''}`
          )
          return m
        },
        (m) => m.rps,
        opts.signal
      )
      const runs = measured.all
      const pick = (name: string): MeasuredHttp => measured.median.get(name)!
      const ours = pick('platform')
      const peers = { 'uws-raw': pick('uws-raw'), 'node-http': pick('node-http') }
      const of = (f: (m: MeasuredHttp) => number) =>
        Object.fromEntries(Object.entries(peers).map(([k, m]) => [k, f(m)]))
      return {
        scenario: 'http-json',
        description: this.description,
        rows: [
          row(
            'rps',
            'requests/s',
            'req/s',
            'higher',
            ours.rps,
            of((m) => m.rps),
            false
          ),
          row(
            'p50_ms',
            'latency p50',
            'ms',
            'lower',
            ours.p50Ms,
            of((m) => m.p50Ms),
            false
          ),
          row(
            'p99_ms',
            'latency p99',
            'ms',
            'lower',
            ours.p99Ms,
            of((m) => m.p99Ms),
            false
          ),
          row(
            'cpu_us_per_req',
            'server CPU per request (ratio = requests per CPU-second)',
            'µs',
            'lower',
            ours.cpuUsPerReq,
            of((m) => m.cpuUsPerReq)
          ),
          row(
            'peak_rss_mb',
            'server peak RSS',
            'MB',
            'lower',
            ours.peakRssMb,
            of((m) => m.peakRssMb),
            false
          )
        ],
        notes: [
          `load: ${ours.command.replace(/http:\/\/\S+/, '<server>' + PATH)} (${findWrk() !== null ? 'wrk' : 'autocannon: wrk not installed, a Node client may bound uWS figures'}); ${opts.warmupSec} s warm-up per subject, ${rounds} round(s), median round`,
          `server CPU: ${Object.entries({ platform: ours, ...peers })
            .map(([k, m]) => `${k} ${(m.cpuCores * 100).toFixed(0)}%`)
            .join(', ')} of one core (a server under 100% is client-bound; read CPU µs/req)`
        ],
        rounds: measured.info,
        details: Object.fromEntries([...runs].map(([k, v]) => [k, v]))
      }
    } finally {
      await Promise.all(servers.map((s) => s.stop()))
    }
  }
}

export default scenario
