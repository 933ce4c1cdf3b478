import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Clock ticks per second of /proc/<pid>/stat times (sysconf(_SC_CLK_TCK); 100 on Linux x86-64). */
const CLK_TCK = 100

const live = new Set<ChildProcess>()
let hooked = false

/** Kills every child still running; installed once so no server outlives the harness. */
export function killAll(): void {
  for (const c of live) {
    try {
      c.kill('SIGKILL')
    } catch {
      /* already gone */
    }
  }
  live.clear()
}

function hookExit(): void {
  if (hooked) return
  hooked = true
  process.on('exit', killAll)
}

export interface ServerProcess {
  name: string
  pid: number
  url: string
  port: number
  /** User+system CPU seconds consumed so far by the process (all threads) and its live child processes. */
  cpuSeconds(): number
  /** The same split into user space and the kernel (utime and stime), in seconds. */
  cpuTimes(): CpuTimes
  /** Current and peak resident set size in bytes. */
  memory(): { rss: number; peak: number }
  /** Resets the peak RSS (VmHWM) so a measurement window reports its own peak. */
  resetPeak(): void
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>
  /** Last lines of stderr/stdout (for error messages). */
  output(): string
}

export interface StartOptions {
  name: string
  command?: string
  args: string[]
  cwd: string
  env?: Record<string, string>
  /** How long to wait for the URL line; BENCH_START_TIMEOUT_MS, else 15 s, when absent. */
  timeoutMs?: number
}

// a machine loaded by other work starts a server slower than an idle one
const START_TIMEOUT_MS = Number(process.env.BENCH_START_TIMEOUT_MS ?? 15000)

const URL_RE = /(https?|wss?):\/\/(127\.0\.0\.1|localhost|\[::1\]):(\d+)/

/**
 * Starts a server as a child process and resolves once it printed the URL it listens on
 * (our CLI prints `platform listening on http://127.0.0.1:PORT` on stderr; peers print the same shape on stdout).
 */
export async function startServer(opts: StartOptions): Promise<ServerProcess> {
  hookExit()
  const child = spawn(opts.command ?? process.execPath, opts.args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  live.add(child)
  let tail = ''
  const keep = (d: Buffer) => {
    tail = (tail + d.toString()).slice(-4000)
  }
  child.stderr!.on('data', keep)
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      live.delete(child)
      resolve()
    })
  })

  const url = await new Promise<string>((resolve, reject) => {
    let buf = ''
    const timer = setTimeout(() => {
      fail(new Error(`${opts.name}: no URL printed within ${opts.timeoutMs ?? START_TIMEOUT_MS} ms\n${tail}`))
    }, opts.timeoutMs ?? START_TIMEOUT_MS)
    const onData = (d: Buffer) => {
      keep(d)
      buf += d.toString()
      const m = URL_RE.exec(buf)
      if (m !== null) {
        cleanup()
        resolve(`http://127.0.0.1:${m[3]}`)
      }
    }
    const onExit = (code: number | null) => {
      fail(new Error(`${opts.name} exited (${code}) before listening\n${tail}`))
    }
    const cleanup = () => {
      clearTimeout(timer)
      child.stdout!.off('data', onData)
      child.stderr!.off('data', onData)
      child.off('exit', onExit)
    }
    const fail = (e: Error) => {
      cleanup()
      child.kill('SIGKILL')
      reject(e)
    }
    // our CLI prints its line on stderr (stdout is JSON logs); peers print on stdout
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', onExit)
  })
  // keep draining stdout so a chatty server never blocks on a full pipe
  child.stdout!.on('data', keep)

  const pid = child.pid!
  return {
    name: opts.name,
    pid,
    url,
    port: Number(new URL(url).port),
    cpuSeconds: () => treeCpuSeconds(pid),
    cpuTimes: () => treeCpuTimes(pid),
    memory: () => memoryOf(pid),
    resetPeak: () => {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5')
      } catch {
        /* not permitted: peak stays since start */
      }
    },
    output: () => tail,
    stop: async (graceMs = 5000) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const t = setTimeout(() => {
        child.kill('SIGKILL')
      }, graceMs)
      await exited
      clearTimeout(t)
    }
  }
}

/** The pids of a process and all its live descendants (a sandbox process under the server counts as the server). */
export function processTree(pid: number): number[] {
  const out = [pid]
  for (let i = 0; i < out.length; i++) {
    let tids: string[]
    try {
      tids = readdirSync(`/proc/${out[i]}/task`)
    } catch {
      continue
    }
    for (const tid of tids) {
      let kids: string
      try {
        kids = readFileSync(`/proc/${out[i]}/task/${tid}/children`, 'utf8')
      } catch {
        continue
      }
      for (const k of kids.split(' ')) if (k.trim() !== '') out.push(Number(k))
    }
  }
  return out
}

/** CPU seconds of a process and its live descendants. */
export function treeCpuSeconds(pid: number): number {
  const t = treeCpuTimes(pid)
  return t.user + t.system
}

/** User-space and kernel CPU seconds. */
export interface CpuTimes {
  user: number
  system: number
}

/** User-space and kernel CPU seconds of a process and its live descendants. */
export function treeCpuTimes(pid: number): CpuTimes {
  const sum = { user: 0, system: 0 }
  for (const p of processTree(pid)) {
    try {
      const t = cpuTimesOf(p)
      sum.user += t.user
      sum.system += t.system
    } catch {
      /* exited meanwhile */
    }
  }
  return sum
}

/** utime+stime of a process (all its threads) in seconds, from /proc/<pid>/stat. */
export function cpuSecondsOf(pid: number | 'self'): number {
  const t = cpuTimesOf(pid)
  return t.user + t.system
}

/**
 * utime and stime of a process (all its threads) in seconds, from /proc/<pid>/stat; for this
 * process, from getrusage (`process.cpuUsage`): /proc counts in 10 ms ticks, which made a 60 ms
 * burst read 3 or 4 µs per step and nothing in between.
 */
export function cpuTimesOf(pid: number | 'self'): CpuTimes {
  if (pid === 'self') {
    const u = process.cpuUsage()
    return { user: u.user / 1e6, system: u.system / 1e6 }
  }
  return statTimes(`/proc/${pid}/stat`)
}

/**
 * utime+stime in seconds of a process's main thread alone (its task whose id is the pid), from
 * /proc: set against `cpuSecondsOf`, what its other threads (V8's background compiler and
 * collector, libuv's pool where LMDB's writer runs) took.
 */
export function mainThreadCpuSeconds(pid: number): number {
  const t = statTimes(`/proc/${pid}/task/${pid}/stat`)
  return t.user + t.system
}

/** utime and stime in seconds from a /proc `stat` file (a process's or one of its threads'). */
function statTimes(path: string): CpuTimes {
  const stat = readFileSync(path, 'utf8')
  // fields after the command name (which may contain spaces) start at state = field 3
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { user: Number(f[11]) / CLK_TCK, system: Number(f[12]) / CLK_TCK }
}

/** VmRSS and VmHWM (peak) in bytes, from /proc/<pid>/status. */
export function memoryOf(pid: number | 'self'): { rss: number; peak: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (k: string) => {
    const m = new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)
    return m === null ? 0 : Number(m[1]) * 1024
  }
  return { rss: kb('VmRSS'), peak: kb('VmHWM') }
}

/**
 * Lifts the per-address caps on room members and agent connections: every bench client comes from
 * one loopback address, and those scenarios measure fan-out and streaming, not the cap.
 */
export const NO_ADDRESS_CAPS = [
  '--set',
  'platform.transport.rooms.max-members-per-address=10000000',
  '--set',
  'platform.ai.endpoint.max-connections-per-address=10000000'
]

/**
 * Starts our server: the real CLI, loopback, port 0, a fresh data dir, no plugins, quiet logs.
 * BENCH_PLATFORM_ROOT points at another built checkout (e.g. a branch exported with git archive)
 * so one harness can measure it.
 */
export async function startPlatform(
  root: string,
  tmpDir: string,
  extra: string[] = [],
  env: Record<string, string> = {}
): Promise<ServerProcess> {
  root = process.env.BENCH_PLATFORM_ROOT ?? root
  const data = join(tmpDir, `data-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`)
  const plugins = join(tmpDir, 'no-plugins')
  mkdirSync(plugins, { recursive: true })
  return await startServer({
    name: 'platform',
    args: [
      '--no-node-snapshot',
      // e.g. BENCH_PLATFORM_NODE_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/prof': where the served platform's time goes
      ...(process.env.BENCH_PLATFORM_NODE_FLAGS ?? '').split(' ').filter((f) => f !== ''),
      join(root, 'bin/platform.js'),
      'serve',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--data',
      data,
      '--plugins',
      plugins,
      '--log-level',
      'warn',
      ...extra
    ],
    cwd: root,
    env
  })
}

/** Starts a peer script from bench/peers (plain JS, run from the source tree). */
export async function startPeer(
  root: string,
  script: string,
  args: string[] = [],
  env: Record<string, string> = {}
): Promise<ServerProcess> {
  return await startServer({
    name: script.replace(/\.js$/, ''),
    args: [join(root, 'bench/peers', script), ...args],
    cwd: root,
    env
  })
}

export const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms)
  })

/**
 * Runs a compiled bench script (`dist/bench/<name>.js`) in its own Node process and resolves with
 * its stdout; killed when `signal` aborts, rejected with the head of its stderr when it fails.
 */
export function runBenchScript(
  root: string,
  name: string,
  args: string[],
  signal: AbortSignal,
  nodeArgs: string[] = []
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--no-node-snapshot', ...nodeArgs, join(root, `dist/bench/${name}.js`), ...args],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe']
      }
    )
    let text = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString()
    })
    const abort = () => {
      child.kill('SIGKILL')
    }
    signal.addEventListener('abort', abort, { once: true })
    child.on('exit', (code) => {
      signal.removeEventListener('abort', abort)
      if (code === 0) resolve(text)
      else reject(new Error(`bench/${name}.js exited ${code}: ${err.split('\n').slice(0, 3).join(' ')}`))
    })
  })
}
