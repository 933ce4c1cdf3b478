import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const BIN = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p))

/** A real Redis for tests: Debian's redis-server in a throwaway directory on a free loopback port. */
export interface TestRedis {
  url: string
  /** Stops the server (SIGTERM, no save): an outage. */
  stop(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
}

/**
 * Starts Redis for the test `t` (stopped and removed when `t` ends); undefined, and `t` skipped,
 * when redis-server is not installed, except under `CI=true` where that is a broken CI.
 */
export async function testRedis(t: Test): Promise<TestRedis | undefined> {
  if (BIN === undefined) {
    const why = 'redis-server is not installed'
    if (process.env.CI === 'true') throw new Error(`${why}: .ci/run installs the redis-server package`)
    t.skip(`${why}: apt-get install redis-server to run the Redis tests`, () => {})
    return undefined
  }
  const dir = mkdtempSync(join(tmpdir(), 'platform-redis-'))
  const port = await freePort()
  let proc: ChildProcess | undefined
  const start = async () => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no']
    const p = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] })
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
  await start()
  t.teardown(async () => {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  })
  return { url: `redis://127.0.0.1:${port}`, stop, start }
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
