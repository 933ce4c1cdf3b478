import type { Test } from 'tap'
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'pg'

/**
 * A real PostgreSQL for tests, never a mock: `PLATFORM_TEST_PG_URL` when set (a server you run),
 * otherwise a throwaway cluster this file starts on 127.0.0.1 and a free port, with its unix
 * socket and data in a temporary directory, stopped and removed when the test ends. As root
 * (here and in CI) the server runs as the `postgres` user, which it insists on.
 *
 * Without PostgreSQL a test fails when `CI=true` (.ci/run installs it, so its absence is a broken
 * CI) and is skipped otherwise, saying why.
 */
export interface TestPostgres {
  /** An admin connection string to the cluster (database `postgres`). */
  url: string
  /** A fresh, empty database on the cluster, dropped when `t` ends; its connection string. */
  database(t: Test): Promise<string>
}

const PG_ROOT = '/usr/lib/postgresql'

function binDir(): string | undefined {
  if (existsSync(PG_ROOT)) {
    const versions = readdirSync(PG_ROOT)
      .filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a))
    if (versions[0] !== undefined) return join(PG_ROOT, versions[0], 'bin')
  }
  try {
    const initdb = execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim()
    return initdb === '' ? undefined : join(initdb, '..')
  } catch {
    return undefined
  }
}

async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as { port: number }
  await new Promise((resolve) => srv.close(resolve))
  return port
}

/** Starts or finds PostgreSQL for the test `t`; undefined (and `t` skipped) when there is none locally. */
export async function testPostgres(t: Test): Promise<TestPostgres | undefined> {
  const given = process.env.PLATFORM_TEST_PG_URL
  if (given !== undefined && given !== '') return withDatabases(given)
  const bin = binDir()
  if (bin === undefined) {
    const why = 'PostgreSQL is not installed (no initdb in /usr/lib/postgresql/*/bin or on PATH)'
    if (process.env.CI === 'true') throw new Error(`${why}: .ci/run installs the postgresql package`)
    t.skip(`${why}: install the postgresql package or set PLATFORM_TEST_PG_URL to run the Postgres tests`)
    return undefined
  }
  return withDatabases(await startCluster(t, bin))
}

async function startCluster(t: Test, bin: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-pg-'))
  const asRoot = process.getuid?.() === 0
  const run = (cmd: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args]
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }))
    chownSync(dir, uid, gid)
  }
  const data = join(dir, 'data')
  execFileSync(...run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']), {
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let proc: ChildProcess | undefined
  let url = ''
  for (let attempt = 0; proc === undefined; attempt++) {
    const port = await freePort()
    const [cmd, args] = run('postgres', [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=100'
    ])
    const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let log = ''
    p.stderr!.on('data', (d: Buffer) => (log += d.toString()))
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 30_000)
      p.stderr!.on('data', () => {
        if (log.includes('ready to accept connections')) {
          clearTimeout(timer)
          resolve(true)
        }
      })
      p.on('exit', () => {
        clearTimeout(timer)
        resolve(false)
      })
    })
    if (ready) {
      proc = p
      url = `postgres://postgres@127.0.0.1:${port}/postgres`
    } else {
      p.kill('SIGKILL')
      if (attempt >= 2) throw new Error(`postgres did not start:\n${log}`)
    }
  }
  t.teardown(async () => {
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    // runuser forwards no signal reliably: tell the postmaster itself (fast shutdown)
    const pidFile = join(data, 'postmaster.pid')
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : undefined
    if (pid !== undefined && pid > 0) process.kill(pid, 'SIGINT')
    else proc.kill('SIGINT')
    await exited
    rmSync(dir, { recursive: true, force: true })
  })
  return url
}

function withDatabases(url: string): TestPostgres {
  let n = 0
  return {
    url,
    async database(t) {
      const name = `platform_test_${process.pid}_${Date.now()}_${n++}`
      await admin(url, `CREATE DATABASE ${name}`)
      t.teardown(() => admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      const u = new URL(url)
      u.pathname = `/${name}`
      return u.toString()
    }
  }
}

async function admin(url: string, sql: string): Promise<void> {
  const c = new Client({ connectionString: url })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}
