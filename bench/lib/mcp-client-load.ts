import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { ServerProcess } from './proc.js'

export interface ClientLoadResult {
  calls: number
  errors: number
  rps: number
  /** The official client's own CPU per call (its process, all threads). */
  clientUs: number
  /** Each server's CPU per call over the same window, in the order given. */
  serverUs: number[]
}

/**
 * Calls `tool` at `url` with the official MCP SDK client (bench/lib/mcp-client-worker.ts in a
 * child process), `inFlight` calls at a time: a warm-up, then one measured window, with the
 * client's CPU and each of `servers`' CPU over that window, per call.
 */
export async function measureClientLoad(o: {
  root: string
  url: string
  tool: string
  inFlight: number
  warmupSec: number
  durationSec: number
  servers: ServerProcess[]
  signal: AbortSignal
}): Promise<ClientLoadResult> {
  const child = spawn(
    process.execPath,
    [join(o.root, 'dist/bench/lib/mcp-client-worker.js'), o.url, o.tool, String(o.inFlight), String(o.warmupSec)],
    { cwd: o.root, stdio: ['pipe', 'pipe', 'pipe'] }
  )
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const kill = (): void => {
    child.kill('SIGKILL')
  }
  o.signal.addEventListener('abort', kill, { once: true })
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`the MCP client load exited (${code}): ${stderr.slice(0, 400)}`))
    })
  })
  exited.catch(() => {})
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async (): Promise<string> => {
    const r = await Promise.race([lines.next(), exited])
    if (r.done === true) throw new Error(`the MCP client load ended early: ${stderr.slice(0, 400)}`)
    return r.value
  }
  try {
    if ((await next()) !== 'ready') throw new Error('the MCP client load did not get ready')
    const cpu0 = o.servers.map((s) => s.cpuSeconds())
    child.stdin.write(`go ${o.durationSec}\n`)
    const r = JSON.parse(await next()) as { calls: number; errors: number; seconds: number; cpuUs: number }
    const cpu1 = o.servers.map((s) => s.cpuSeconds())
    const per = (us: number): number => (r.calls > 0 ? us / r.calls : NaN)
    return {
      calls: r.calls,
      errors: r.errors,
      rps: r.calls / r.seconds,
      clientUs: per(r.cpuUs),
      serverUs: cpu1.map((c, i) => per((c - cpu0[i]!) * 1e6))
    }
  } finally {
    o.signal.removeEventListener('abort', kill)
    child.stdin.end()
    if (child.exitCode === null) kill()
  }
}
