import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A throwaway PostgreSQL cluster on 127.0.0.1 and a free port, its data and unix socket in a
 * temporary directory, for the Postgres store's tests and benchmark. As root (here and in CI) the
 * server runs as the `postgres` user, which it insists on.
 */
export interface PostgresCluster {
  /** Admin connection string (user and database `postgres`, trust auth on loopback). */
  url: string
  /** The postmaster: its process tree is the server's CPU. */
  pid: number
  /** Fast shutdown, then the directory is removed. */
  stop(): Promise<void>
  /** Fast shutdown, keeping the data: the server is down until `resume`. */
  pause(): Promise<void>
  /** Starts the paused server again on the same port and data. */
  resume(): Promise<void>
}

const PG_ROOT = '/usr/lib/postgresql'

/** Debian's newest /usr/lib/postgresql/<v>/bin, else wherever `initdb` is on PATH; undefined when absent. */
export function postgresBinDir(): string | undefined {
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

export async function startPostgresCluster(bin: string): Promise<PostgresCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-pg-'))
  try {
    return await start(bin, dir)
  } catch (e) {
    rmSync(dir, { recursive: true, force: true })
    throw e
  }
}

async function start(bin: string, dir: string): Promise<PostgresCluster> {
  const asRoot = process.getuid?.() === 0
  const run = (cmd: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args]
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }))
    chownSync(dir, id('-u'), id('-g'))
  }
  const data = join(dir, 'data')
  execFileSync(...run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']), {
    stdio: ['ignore', 'ignore', 'pipe']
  })
  for (let attempt = 0; ; attempt++) {
    const port = await freePort()
    const server = await launch(run, data, dir, port)
    if (typeof server !== 'string') {
      let { proc, pid } = server
      return {
        url: `postgres://postgres@127.0.0.1:${port}/postgres`,
        get pid() {
          return pid
        },
        stop: async () => {
          await shutdown(proc, pid)
          rmSync(dir, { recursive: true, force: true })
        },
        pause: () => shutdown(proc, pid),
        resume: async () => {
          const again = await launch(run, data, dir, port)
          if (typeof again === 'string') throw new Error(`postgres did not start again:\n${again}`)
          ;({ proc, pid } = again)
        }
      }
    }
    // another process took the port between the probe and the bind: try another
    if (attempt >= 2 || !server.includes('could not')) throw new Error(`postgres did not start:\n${server}`)
  }
}

/** Starts the postmaster on `port`: the process and its pid, or its log when it gave up. */
async function launch(
  run: (cmd: string, args: string[]) => [string, string[]],
  data: string,
  dir: string,
  port: number
): Promise<{ proc: ChildProcess; pid: number } | string> {
  const [cmd, args] = run('postgres', ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1'])
  const proc = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  const log = await untilReady(proc)
  if (log !== undefined) {
    proc.kill('SIGKILL')
    return log
  }
  // the postmaster writes its pid first: the process tree under runuser is not what we measure
  return { proc, pid: Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]) }
}

/** Resolves undefined once the server accepts connections, or with its log when it gave up. */
function untilReady(proc: ChildProcess): Promise<string | undefined> {
  let log = ''
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(log || 'no output within 30 s'), 30_000)
    proc.stderr!.on('data', (d: Buffer) => {
      log += d.toString()
      if (log.includes('ready to accept connections')) {
        clearTimeout(timer)
        resolve(undefined)
      }
    })
    proc.once('exit', () => {
      clearTimeout(timer)
      resolve(log)
    })
  })
}

async function shutdown(proc: ChildProcess, pid: number): Promise<void> {
  const exited = new Promise((resolve) => (proc.exitCode !== null ? resolve(null) : proc.once('exit', resolve)))
  // runuser need not forward signals: tell the postmaster itself (SIGINT: fast shutdown)
  try {
    process.kill(pid, 'SIGINT')
  } catch {
    proc.kill('SIGINT')
  }
  await exited
}
