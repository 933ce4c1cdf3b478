import { execFile, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { ServerProcess } from './proc.js'

export interface HttpLoadOptions {
  url: string
  connections: number
  durationSec: number
  /** wrk threads (the load generator's share of the 2 cores); autocannon always runs one. */
  threads?: number
  root: string
  signal?: AbortSignal
  /** Force a tool (default: wrk when installed). */
  tool?: 'wrk' | 'autocannon'
  /**
   * Another request than GET without a body, repeated. With `sequence`, that placeholder in the body
   * is replaced by a counter on each request (JSON-RPC ids must differ among concurrent requests).
   */
  request?: { method: string; body?: string; headers?: Record<string, string>; sequence?: string }
}

export interface HttpLoadResult {
  tool: 'wrk' | 'autocannon'
  command: string
  requests: number
  seconds: number
  rps: number
  p50Ms: number
  p99Ms: number
  errors: number
}

export interface MeasuredHttp extends HttpLoadResult {
  /** Server CPU (user+system) per request in microseconds, from /proc before and after. */
  cpuUsPerReq: number
  /** Server CPU use during the window, 1.0 = one core. */
  cpuCores: number
  /** Peak RSS of the server during the window, MB. */
  peakRssMb: number
}

let wrkPath: string | null | undefined

/** The wrk binary when installed (`apt-get install wrk`), else null (autocannon is used). */
export function findWrk(): string | null {
  if (wrkPath !== undefined) return wrkPath
  if (process.env.BENCH_LOAD === 'autocannon') return (wrkPath = null)
  const r = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' })
  wrkPath = r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : null
  return wrkPath
}

/** Runs one HTTP load window with wrk (preferred: a C client does not hide the server) or autocannon. */
export async function httpLoad(o: HttpLoadOptions): Promise<HttpLoadResult> {
  const wrk = o.tool === 'autocannon' ? null : findWrk()
  return wrk !== null ? await runWrk(wrk, o) : await runAutocannon(o)
}

async function runWrk(wrk: string, o: HttpLoadOptions): Promise<HttpLoadResult> {
  const threads = Math.min(o.threads ?? 1, o.connections)
  let script = join(o.root, 'bench/wrk/report.lua')
  if (o.request !== undefined) {
    // one script: the request (method, headers, body as Lua long strings) then the JSON summary hook
    const q = (v: string) => `[==[${v}]==]`
    const lines = [`wrk.method = ${q(o.request.method)}`]
    if (o.request.body !== undefined) lines.push(`wrk.body = ${q(o.request.body)}`)
    for (const [k, v] of Object.entries(o.request.headers ?? {})) lines.push(`wrk.headers[ ${q(k)} ] = ${q(v)}`)
    const seq = o.request.sequence
    if (seq !== undefined && o.request.body !== undefined && o.request.body.includes(seq)) {
      const i = o.request.body.indexOf(seq)
      lines.push(
        `local pre, post, n = ${q(o.request.body.slice(0, i))}, ${q(o.request.body.slice(i + seq.length))}, 0`,
        'request = function() n = n + 1; return wrk.format(nil, nil, nil, pre .. n .. post) end'
      )
    }
    const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'))
    script = join(dir, 'request.lua')
    writeFileSync(script, lines.join('\n') + '\n' + readFileSync(join(o.root, 'bench/wrk/report.lua'), 'utf8'))
  }
  const args = [`-t${threads}`, `-c${o.connections}`, `-d${o.durationSec}s`, '--timeout', '5s', '-s', script, o.url]
  let out: string
  try {
    out = await new Promise<string>((resolve, reject) => {
      execFile(
        wrk,
        args,
        { maxBuffer: 1 << 20, ...(o.signal !== undefined ? { signal: o.signal } : {}) },
        (err, stdout, stderr) => {
          if (err !== null) {
            reject(new Error(`wrk failed: ${err.message}\n${stderr}`))
            return
          }
          resolve(stdout)
        }
      )
    })
  } finally {
    if (o.request !== undefined) rmSync(dirname(script), { recursive: true, force: true })
  }
  const line = out.split('\n').find((l) => l.startsWith('WRKJSON '))
  if (line === undefined) throw new Error(`wrk printed no summary:\n${out}`)
  const j = JSON.parse(line.slice(8)) as {
    requests: number
    duration_us: number
    p50_us: number
    p99_us: number
    errors: Record<string, number>
  }
  const seconds = j.duration_us / 1e6
  const errors = Object.values(j.errors).reduce((a, b) => a + b, 0)
  return {
    tool: 'wrk',
    command: `wrk ${args
      .join(' ')
      .replace(o.root + '/', '')
      .replace(script, '<request>.lua')}`,
    requests: j.requests,
    seconds,
    rps: j.requests / seconds,
    p50Ms: j.p50_us / 1000,
    p99Ms: j.p99_us / 1000,
    errors
  }
}

let autocannonSeq = 0

async function runAutocannon(o: HttpLoadOptions): Promise<HttpLoadResult> {
  // untyped package: import by a computed name so TypeScript does not look for its types
  const name = 'autocannon'
  const { default: autocannon } = (await import(name)) as {
    default: (opts: object) => Promise<AutocannonResult> & { stop?: () => void }
  }
  const { sequence, ...request } = o.request ?? { method: 'GET' }
  const body = request.body
  const idReq =
    sequence !== undefined && body?.includes(sequence) === true
      ? {
          requests: [
            {
              setupRequest: (r: Record<string, unknown>) => ({
                ...r,
                body: body.replace(sequence, String(++autocannonSeq))
              })
            }
          ]
        }
      : {}
  const run = autocannon({
    url: o.url,
    connections: o.connections,
    duration: o.durationSec,
    pipelining: 1,
    timeout: 5,
    ...request,
    ...idReq
  })
  const abort = () => {
    ;(run as unknown as { stop?: () => void }).stop?.()
  }
  o.signal?.addEventListener('abort', abort, { once: true })
  const r = await run
  o.signal?.removeEventListener('abort', abort)
  const seconds = r.duration
  return {
    tool: 'autocannon',
    command: `autocannon -c ${o.connections} -d ${o.durationSec} -p 1 ${o.url}`,
    requests: r.requests.total,
    seconds,
    rps: r.requests.total / seconds,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx
  }
}

interface AutocannonResult {
  duration: number
  requests: { total: number }
  latency: { p50: number; p99: number }
  errors: number
  timeouts: number
  non2xx: number
}

/** One measured window against `server`: load plus the server's CPU and peak RSS over the same window. */
export async function measureHttp(
  server: ServerProcess,
  o: Omit<HttpLoadOptions, 'url'> & { path: string }
): Promise<MeasuredHttp> {
  server.resetPeak()
  const cpu0 = server.cpuSeconds()
  const t0 = performance.now()
  const r = await httpLoad({ ...o, url: server.url + o.path })
  const wall = (performance.now() - t0) / 1000
  const cpu = server.cpuSeconds() - cpu0
  return {
    ...r,
    cpuUsPerReq: r.requests > 0 ? (cpu * 1e6) / r.requests : NaN,
    cpuCores: cpu / wall,
    peakRssMb: server.memory().peak / 1048576
  }
}
