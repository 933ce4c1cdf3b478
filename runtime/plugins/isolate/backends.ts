import { fork, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { IsolateRunner, type FailReason, type IsolateLoadData, type IsolateSink } from './isolate-core.js'
import { Batcher, type ToChild, type ToParent } from './protocol.js'

/** Events a backend reports to its instance: the isolate's own sink plus `exited` (the process died: every call in flight is lost). */
export interface BackendEvents extends IsolateSink {
  exited (reason: FailReason, message: string): void
}

/** Where a plugin's isolate lives: in a supervised sandbox process (default) or in this process. */
export interface IsolateBackend {
  readonly ready: boolean
  /** (Re)creates the isolate and loads the plugin; resolves with the descriptor or rejects with the load error. */
  start (): Promise<unknown>
  call (id: number, kind: string, name: string, argsJson: string): void
  capDone (capId: number, ok: boolean, json: string): void
  abort (id: number, message: string): void
  dispose (): Promise<void>
}

/** The isolate in this process: cheapest calls, but V8 out-of-memory in the isolate can abort the host. */
export class InProcessBackend implements IsolateBackend {
  private readonly runner: IsolateRunner
  constructor (data: IsolateLoadData, events: IsolateSink) { this.runner = new IsolateRunner(data, events) }
  get ready (): boolean { return this.runner.alive }
  async start (): Promise<unknown> { return this.runner.load() }
  call (id: number, kind: string, name: string, argsJson: string): void { this.runner.call(id, kind, name, argsJson) }
  capDone (capId: number, ok: boolean, json: string): void { this.runner.capDone(capId, ok, json) }
  abort (id: number, message: string): void { this.runner.abort(id, message) }
  async dispose (): Promise<void> { this.runner.dispose() }
}

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
/**
 * How long a sandbox process may stay silent after being told to abort a call before it is
 * killed: past the plugin's own time limit (another call may legitimately run that long) plus slack.
 */
const WEDGED_SLACK_MS = 2000
/**
 * A process that keeps dying is not restarted on every call (each start costs 150-350 ms of CPU):
 * the first restart is immediate, then 0.5 s, 1 s, 2 s ... up to 30 s; calls in between fail at
 * once. A process that lived `CRASH_RESET_MS` starts the count again.
 */
const BACKOFF_BASE_MS = 500
const BACKOFF_MAX_MS = 30_000
const CRASH_RESET_MS = 30_000

/** Only the flags a sandbox process needs (never `-e`, `--inspect`, heap sizes of the host...): loaders when run from source. */
function childExecArgv (): string[] {
  const keep = ['--no-node-snapshot']
  for (const a of process.execArgv) {
    if (a === '--enable-source-maps' || a.startsWith('--conditions=')) keep.push(a)
    else if (!useCompiled && (a.startsWith('--import=') || a.startsWith('--loader=') || a.startsWith('--experimental-loader='))) keep.push(a)
  }
  return keep
}

/**
 * The isolate in a supervised child process. If it dies (V8 fatal OOM, a crash, killed because
 * it stopped answering) the calls in flight fail with a clear reason and the next call restarts it.
 */
export class ProcessBackend implements IsolateBackend {
  private child: ChildProcess | undefined
  private starting: Promise<unknown> | undefined
  private loaded = false
  private disposed = false
  private stderr = ''
  private wedgeTimer: NodeJS.Timeout | undefined
  /** Aborts sent but not yet acknowledged: new calls wait, so they never land on a process that is stuck or dying. */
  private unacked = 0
  private ackWaiters: (() => void)[] = []
  private readonly onMessage = (batch: ToParent[]): void => { for (const m of batch) this.message(m) }
  private out: Batcher<ToChild> | undefined
  /** Deaths in a row, when the current process finished loading, and the earliest next start. */
  private crashes = 0
  private loadedAt = 0
  private notBefore = 0

  constructor (private readonly data: IsolateLoadData, private readonly events: BackendEvents) {}

  get ready (): boolean { return this.loaded && this.child !== undefined && this.unacked === 0 }
  /** The sandbox process id (benchmarks read its memory). */
  get pid (): number | undefined { return this.child?.pid }

  start (): Promise<unknown> {
    if (this.disposed) return Promise.reject(new Error('sandbox disposed'))
    const wait = this.notBefore - Date.now()
    if (wait > 0) return Promise.reject(new Error(`its sandbox process died ${this.crashes} times in a row; next restart in ${(wait / 1000).toFixed(1)} s`))
    if (this.unacked > 0 && this.child !== undefined) return new Promise<void>((resolve) => this.ackWaiters.push(resolve)).then(async () => this.ready ? undefined : await this.start())
    this.starting ??= new Promise((resolve, reject) => {
      // JSON serialisation: ~30% cheaper than 'advanced' per round trip for the small messages calls are made of
      const child = fork(CHILD, [], { execArgv: childExecArgv(), serialization: 'json', stdio: ['ignore', 'ignore', 'pipe', 'ipc'] })
      this.child = child
      this.stderr = ''
      this.loaded = false
      child.stderr!.setEncoding('utf8')
      child.stderr!.on('data', (s: string) => { this.stderr = (this.stderr + s).slice(-STDERR_TAIL) })
      this.out = new Batcher<ToChild>((b) => { if (child.connected) child.send(b) })
      const onLoad = (batch: ToParent[]): void => {
        const m = batch.find((x) => x.t === 'loaded' || x.t === 'load-failed')
        if (m === undefined) return
        if (m.t === 'loaded') { this.loaded = true; this.loadedAt = Date.now(); done(); resolve(m.descriptor) } else if (m.t === 'load-failed') { done(); this.kill(); reject(new Error(m.message)) }
      }
      const onEarlyExit = (code: number | null, signal: string | null): void => { done(); reject(new Error(`sandbox process exited while loading (${signal ?? `code ${code}`})${this.stderrHint()}`)) }
      const done = (): void => { child.off('message', onLoad); child.off('exit', onEarlyExit); this.starting = undefined }
      child.on('message', onLoad)
      child.once('exit', onEarlyExit)
      child.on('message', this.onMessage)
      // 'close' (not 'exit'): stderr is fully read by then, so a V8 out-of-memory report is seen
      child.once('close', (code: number | null, signal: string | null) => { this.exited(child, code, signal) })
      child.on('error', () => { /* reported through exit */ })
      child.unref(); (child as unknown as { channel?: { unref (): void } }).channel?.unref()
      this.send({ t: 'load', data: this.data })
    })
    return this.starting
  }

  call (id: number, kind: string, name: string, args: string): void { this.send({ t: 'call', id, kind, name, args }) }
  capDone (capId: number, ok: boolean, json: string): void { this.send({ t: 'cap', capId, ok, json }) }
  abort (id: number, message: string): void {
    this.send({ t: 'abort', id, message })
    this.unacked++
    // a process that cannot even acknowledge an abort is wedged: kill it, calls in flight fail, next call restarts it
    this.wedgeTimer ??= setTimeout(() => { this.wedgeTimer = undefined; this.kill() }, this.data.timeoutMs + WEDGED_SLACK_MS)
  }

  async dispose (): Promise<void> {
    this.disposed = true
    const child = this.child
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => { child.kill('SIGKILL') }, 1000)
      child.once('exit', () => { clearTimeout(t); resolve() })
      child.disconnect?.()
      child.kill('SIGTERM')
    })
  }

  private send (m: ToChild): void {
    const child = this.child
    if (child === undefined || !child.connected) throw new Error('sandbox process is not running')
    this.out!.push(m)
  }

  private kill (): void { this.child?.kill('SIGKILL') }

  private message (m: ToParent): void {
    if (this.wedgeTimer !== undefined) { clearTimeout(this.wedgeTimer); this.wedgeTimer = undefined }
    const e = this.events
    switch (m.t) {
      case 'result': e.result(m.id, m.json); break
      case 'failed': e.failed(m.id, m.reason, m.message); break
      case 'progress': e.progress(m.id, m.json); break
      case 'cap': e.cap(m.capId, m.id, m.op, m.args); break
      case 'log': e.log(m.level, m.msg, m.data); break
      case 'died': e.died(m.reason, m.message); break
      case 'aborted': if (--this.unacked <= 0) this.flushAcks(); break
    }
  }

  private flushAcks (): void {
    this.unacked = 0
    for (const w of this.ackWaiters.splice(0)) w()
  }

  private stderrHint (): string {
    const s = this.stderr
    if (/out of memory|heap limit|OOM/i.test(s)) return ': V8 ran out of memory'
    const line = s.trim().split('\n').filter((l) => l.trim() !== '').slice(-1)[0]
    return line !== undefined ? `: ${line.slice(0, 300)}` : ''
  }

  private exited (child: ChildProcess, code: number | null, signal: string | null): void {
    if (this.wedgeTimer !== undefined) { clearTimeout(this.wedgeTimer); this.wedgeTimer = undefined }
    if (this.child !== child) return
    this.child = undefined
    const wasLoaded = this.loaded
    this.loaded = false
    if (this.disposed || !wasLoaded) { this.flushAcks(); return }
    const now = Date.now()
    this.crashes = now - this.loadedAt >= CRASH_RESET_MS ? 1 : this.crashes + 1
    this.notBefore = this.crashes < 2 ? 0 : now + Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (this.crashes - 2))
    const reason: FailReason = /out of memory|heap limit|OOM/i.test(this.stderr) ? 'memory' : 'crashed'
    this.events.exited(reason, `plugin '${this.data.name}' sandbox process died (${signal ?? `exit code ${code}`})${this.stderrHint()}`)
    this.flushAcks()
  }
}
