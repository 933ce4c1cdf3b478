import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Debian's redis-server (or a local build's), undefined when absent. */
export const redisServerBin = (): string | undefined =>
  ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p))

/**
 * A throwaway redis-server on 127.0.0.1 and a free port, its working directory temporary, for the
 * cluster tests and benchmark. Nothing is saved: a restart starts it empty, as an outage would.
 */
export interface RedisServer {
  url: string
  /** The server's pid while it runs (its CPU is the server's). */
  readonly pid: number | undefined
  /** Stops the server (SIGTERM, no save): an outage until `start`. */
  stop(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
  /** Stops it and removes its directory. */
  remove(): Promise<void>
}

export async function startRedisServer(bin: string): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-redis-'))
  const port = await freePort()
  let proc: ChildProcess | undefined
  const start = async () => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no']
    const p = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    proc = p
    await new Promise<void>((resolve, reject) => {
      let out = ''
      p.stdout!.on('data', (d: Buffer) => {
        out += d.toString()
        if (/Ready to accept connections/.test(out)) resolve()
      })
      p.on('exit', (code) => reject(new Error(`redis-server exited ${String(code)}: ${out}`)))
    })
  }
  const stop = async () => {
    const p = proc
    proc = undefined
    if (p === undefined || p.exitCode !== null) return
    await new Promise<void>((resolve) => {
      p.on('exit', () => resolve())
      p.kill('SIGTERM')
    })
  }
  try {
    await start()
  } catch (e) {
    rmSync(dir, { recursive: true, force: true })
    throw e
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return proc?.pid
    },
    stop,
    start,
    remove: async () => {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}
