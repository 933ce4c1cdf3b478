import { fork, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FailReason } from './isolate-core.js'
import { Batcher, type ToChild, type ToParent } from './protocol.js'

const here = import.meta.url
const fromSource = here.endsWith('.ts')
/**
 * Run from TypeScript source (tests), the child uses the compiled copy when `tsc` produced one:
 * starting a child through the TypeScript loader takes seconds, the compiled one ~150 ms.
 */
const compiledChild = new URL('../../../dist/runtime/plugins/isolate/sandbox-process.js', here)
const useCompiled = fromSource && existsSync(compiledChild)
const CHILD = useCompiled ? compiledChild : new URL(`./sandbox-process${fromSource ? '.ts' : '.js'}`, here)
const STDERR_TAIL = 8192
/** tmpfs when there is one: the marker is written on every switch between plugins. */
const MARK_DIR = existsSync('/dev/shm') ? '/dev/shm' : tmpdir()

/**
 * Only the flags a sandbox process needs (never `-e`, `--inspect`, heap sizes of the host...):
 * loaders when run from source.
 */
function childExecArgv(): string[] {
  const keep = ['--no-node-snapshot']
  for (const a of process.execArgv) {
    if (a === '--enable-source-maps' || a.startsWith('--conditions=')) keep.push(a)
    else if (
      !useCompiled &&
      (a.startsWith('--import=') || a.startsWith('--loader=') || a.startsWith('--experimental-loader='))
    )
      keep.push(a)
  }
  return keep
}

/** What a shared process tells each of its plugins when it dies. */
export interface ProcessDeath {
  /** This plugin's isolate was running (or the only one with work) when the process died. */
  blamed: boolean
  reason: FailReason
  /** `(SIGABRT): V8 ran out of memory` and the like. */
  cause: string
  /** Name of the blamed plugin, if any. */
  culprit: string | undefined
}

/** One plugin instance living in a shared process (ProcessBackend). */
export interface Member {
  readonly name: string
  readonly timeoutMs: number
  /** Has calls in flight or a load under way. */
  readonly busy: boolean
  message(m: ToParent): void
  gone(death: ProcessDeath): void
}

/**
 * The supervisor's half of one sandbox process shared by several plugins. Routes messages by slot,
 * kills the process when it stops answering aborts, and on death works out whose isolate killed it:
 * the slot in the crash marker if that plugin had work in flight, else the only plugin with work.
 */
export class SharedProcess {
  readonly child: ChildProcess
  private readonly members = new Map<number, Member>()
  private nextSlot = 1
  private stderr = ''
  private readonly out: Batcher<ToChild>
  private readonly markFd: number
  private wedgeTimer: NodeJS.Timeout | undefined
  /** Whom to blame if the supervisor kills the process itself (an abort nobody acknowledged). */
  private killBlame: Member | undefined
  private wedgeKilled: Member | undefined
  private closing = false
  private markClosed = false
  private holds = 0
  private readonly exitedP: Promise<void>

  constructor(
    private readonly onGone: (p: SharedProcess) => void,
    spinUs: number
  ) {
    const dir = mkdtempSync(join(MARK_DIR, 'plt-iso-'))
    this.markFd = openSync(join(dir, 'mark'), 'w+')
    try {
      // JSON serialisation: ~30% cheaper than 'advanced' per round trip for the small messages calls are made of
      this.child = fork(CHILD, [String(spinUs)], {
        execArgv: childExecArgv(),
        serialization: 'json',
        stdio: ['ignore', 'ignore', 'pipe', 'ipc', this.markFd]
      })
    } finally {
      rmSync(dir, { recursive: true, force: true }) // the open descriptors keep the file; nothing is left on disk
    }
    const child = this.child
    child.stderr!.setEncoding('utf8')
    child.stderr!.on('data', (s: string) => {
      this.stderr = (this.stderr + s).slice(-STDERR_TAIL)
    })
    this.out = new Batcher<ToChild>((b) => {
      if (child.connected) child.send(b)
    })
    child.on('message', (batch: ToParent[]) => {
      if (this.wedgeTimer !== undefined) {
        clearTimeout(this.wedgeTimer)
        this.wedgeTimer = undefined
      }
      for (const m of batch) this.members.get(m.s)?.message(m)
    })
    // 'close' (not 'exit'): stderr is fully read by then, so a V8 out-of-memory report is seen
    child.once('close', (code: number | null, signal: string | null) => {
      this.exited(code, signal)
    })
    // a process the parent disconnected itself may never emit 'close': 'exit' is what shutdown waits for
    this.exitedP = new Promise((resolve) => {
      child.once('exit', () => {
        resolve()
      })
    })
    child.on('error', () => {
      /* reported through close */
    })
    this.hold(-0)
  }

  /**
   * The process never keeps the host alive by itself, except while a plugin is loading into it:
   * a script that only awaits a load would otherwise end with the load unsettled.
   */
  hold(delta: number): void {
    const was = this.holds
    this.holds += delta
    if (was > 0 && this.holds > 0 && delta !== 0) return
    const channel = (this.child as unknown as { channel?: { ref(): void; unref(): void } }).channel
    const stderr = this.child.stderr as unknown as { ref?(): void; unref?(): void } | null
    if (this.holds > 0) {
      this.child.ref()
      channel?.ref()
      stderr?.ref?.()
    } else {
      this.child.unref()
      channel?.unref()
      stderr?.unref?.()
    }
  }

  get pid(): number | undefined {
    return this.child.pid
  }
  get size(): number {
    return this.members.size
  }
  /** Takes new plugins: running and not shutting down. */
  get open(): boolean {
    return !this.closing && this.child.connected
  }

  attach(m: Member): number {
    const s = this.nextSlot++
    this.members.set(s, m)
    return s
  }

  /** Removes a plugin; the last one out stops the process (resolves when it has exited). */
  async detach(slot: number): Promise<void> {
    if (!this.members.delete(slot)) return
    if (this.members.size > 0) {
      this.trySend({ t: 'unload', s: slot })
      return
    }
    this.closing = true
    this.onGone(this)
    const child = this.child
    if (child.exitCode !== null || child.signalCode !== null) return
    const t = setTimeout(() => {
      child.kill('SIGKILL')
    }, 1000)
    child.disconnect?.()
    child.kill('SIGTERM')
    await this.exitedP
    clearTimeout(t)
    this.closeMark()
  }

  send(m: ToChild): void {
    if (!this.child.connected) throw new Error('sandbox process is not running')
    this.out.push(m)
  }

  /**
   * An abort was sent for `m`: a process that cannot even acknowledge it within the longest time
   * limit of its plugins plus `slackMs` is wedged. It is killed (every plugin in it loses its calls
   * in flight); the plugin marked as running carries the blame, else `m`.
   */
  watchAbort(m: Member, slackMs: number): void {
    this.killBlame = m
    // any plugin of the process may legitimately hold its thread for its own time limit
    let longest = 0
    for (const x of this.members.values()) longest = Math.max(longest, x.timeoutMs)
    this.wedgeTimer ??= setTimeout(() => {
      this.wedgeTimer = undefined
      this.wedgeKilled = this.killBlame
      this.child.kill('SIGKILL')
    }, longest + slackMs)
  }

  stderrHint(): string {
    const s = this.stderr
    if (/out of memory|heap limit|OOM/i.test(s)) return ': V8 ran out of memory'
    const line = s
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(-1)[0]
    return line !== undefined ? `: ${line.slice(0, 300)}` : ''
  }

  private closeMark(): void {
    if (this.markClosed) return
    this.markClosed = true
    closeSync(this.markFd)
  }

  private trySend(m: ToChild): void {
    try {
      this.send(m)
    } catch {
      /* gone: nothing to tell it */
    }
  }

  private culprit(): Member | undefined {
    const buf = Buffer.alloc(4)
    let slot = 0
    try {
      if (!this.markClosed && readSync(this.markFd, buf, 0, 4, 0) === 4) slot = buf.readInt32LE(0)
    } catch {
      /* no marker: fall back to the plugins with work in flight */
    }
    const marked = this.members.get(slot)
    if (marked?.busy === true) return marked
    // killed by us for a missed acknowledgement, with no plugin marked as running: the one that asked
    if (this.wedgeKilled !== undefined && [...this.members.values()].includes(this.wedgeKilled)) return this.wedgeKilled
    const busy = [...this.members.values()].filter((m) => m.busy)
    if (busy.length === 1) return busy[0]
    if (this.members.size === 1) return [...this.members.values()][0]
    return undefined
  }

  private exited(code: number | null, signal: string | null): void {
    if (this.wedgeTimer !== undefined) {
      clearTimeout(this.wedgeTimer)
      this.wedgeTimer = undefined
    }
    const culprit = this.culprit()
    this.closeMark()
    if (!this.closing) {
      this.closing = true
      this.onGone(this)
    }
    const reason: FailReason = /out of memory|heap limit|OOM/i.test(this.stderr) ? 'memory' : 'crashed'
    const cause = `(${signal ?? `exit code ${code}`})${this.stderrHint()}`
    const members = [...this.members.values()]
    this.members.clear()
    for (const m of members) m.gone({ blamed: m === culprit, reason, cause, culprit: culprit?.name })
  }
}
