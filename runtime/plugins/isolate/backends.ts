import { IsolateRunner, type FailReason, type IsolateLoadData, type IsolateSink } from './isolate-core.js'
import type { IsolatePool } from './pool.js'
import type { ToParent } from './protocol.js'
import type { Member, ProcessDeath, SharedProcess } from './shared-process.js'
import { PlatformError, isPlatformError } from '../../contracts/index.js'
import { PLUGINS_ERRORS } from '../errors.js'

/**
 * Events a backend reports to its instance: the isolate's own sink plus `exited`
 * (the process died: every call in flight is lost).
 */
export interface BackendEvents extends IsolateSink {
  exited(reason: FailReason, message: string): void
}

/** Where a plugin's isolate lives: in a supervised sandbox process (default) or in this process. */
export interface IsolateBackend {
  readonly ready: boolean
  /** (Re)creates the isolate and loads the plugin; resolves with the descriptor or rejects with the load error. */
  start(): Promise<unknown>
  call(id: number, kind: string, name: string, argsJson: string): void
  capDone(capId: number, ok: boolean, json: string): void
  abort(id: number, message: string): void
  dispose(): Promise<void>
}

/** The isolate in this process: cheapest calls, but V8 out-of-memory in the isolate can abort the host. */
export class InProcessBackend implements IsolateBackend {
  private readonly runner: IsolateRunner
  constructor(data: IsolateLoadData, events: IsolateSink) {
    this.runner = new IsolateRunner(data, events)
  }
  get ready(): boolean {
    return this.runner.loaded
  }
  async start(): Promise<unknown> {
    return this.runner.load()
  }
  call(id: number, kind: string, name: string, argsJson: string): void {
    this.runner.call(id, kind, name, argsJson)
  }
  capDone(capId: number, ok: boolean, json: string): void {
    this.runner.capDone(capId, ok, json)
  }
  abort(id: number, message: string): void {
    this.runner.abort(id, message)
  }
  async dispose(): Promise<void> {
    this.runner.dispose()
  }
}

/**
 * How long a sandbox process may stay silent after being told to abort a call before it is
 * killed: past the longest time limit of its plugins (another call may legitimately run that long) plus this.
 */
const WEDGED_SLACK_MS = 2000
/**
 * A plugin that keeps crashing its process is not restarted on every call (each start costs
 * 150-350 ms of CPU): the first restart is immediate, then 0.5 s, 1 s, 2 s ... up to 30 s; calls in
 * between fail at once. A process that lived `CRASH_RESET_MS` starts the count again.
 */
const BACKOFF_BASE_MS = 500
const BACKOFF_MAX_MS = 30_000
const CRASH_RESET_MS = 30_000

/**
 * The plugin's isolate in a sandbox process of the pool, possibly shared with other plugins. If
 * the process dies, the calls in flight fail with a clear reason and the next call loads the
 * plugin into a live process. Crashes and backoff are counted per plugin, only for the plugin
 * whose isolate killed the process; from its first crash (or its first isolate reset for a limit)
 * it runs in a process of its own.
 */
export class ProcessBackend implements IsolateBackend, Member {
  private proc: SharedProcess | undefined
  private slot = 0
  private loaded = false
  private starting: Promise<unknown> | undefined
  private loadWaiter: { resolve: (d: unknown) => void; reject: (e: Error) => void } | undefined
  private disposed = false
  /** Calls sent and not yet settled, as counted by the instance (attribution of a process death). */
  inFlight: () => number = () => 0
  /** Aborts sent but not yet acknowledged: new calls wait, so they never land on a process that is stuck or dying. */
  private unacked = 0
  private ackWaiters: (() => void)[] = []
  /** Crashes in a row, when the current load finished, and the earliest next start. */
  private crashes = 0
  private loadedAt = 0
  private notBefore = 0
  private alone = false

  constructor(
    private readonly data: IsolateLoadData,
    private readonly events: BackendEvents,
    private readonly pool: IsolatePool
  ) {}

  get name(): string {
    return this.data.name
  }
  get timeoutMs(): number {
    return this.data.timeoutMs
  }
  get ready(): boolean {
    return this.loaded && this.unacked === 0
  }
  get busy(): boolean {
    return this.loadWaiter !== undefined || (this.loaded && this.inFlight() > 0)
  }
  /** The sandbox process id (benchmarks read its memory; several plugins may share one). */
  get pid(): number | undefined {
    return this.proc?.pid
  }

  start(): Promise<unknown> {
    if (this.disposed) return Promise.reject(new Error('sandbox disposed'))
    const wait = this.notBefore - Date.now()
    if (wait > 0)
      return Promise.reject(
        new Error(
          `its sandbox process died ${this.crashes} times in a row; next restart in ${(wait / 1000).toFixed(1)} s (quarantined: its calls fail at once until then, and it runs in a sandbox process of its own)`
        )
      )
    if (this.unacked > 0 && this.proc !== undefined)
      return new Promise<void>((resolve) => this.ackWaiters.push(resolve)).then(async () =>
        this.ready ? undefined : await this.start()
      )
    this.starting ??= this.load(true).finally(() => {
      this.starting = undefined
    })
    return this.starting
  }

  call(id: number, kind: string, name: string, args: string): void {
    this.send({ t: 'call', s: this.slot, id, kind, name, args })
  }
  capDone(capId: number, ok: boolean, json: string): void {
    this.send({ t: 'cap', s: this.slot, capId, ok, json })
  }
  abort(id: number, message: string): void {
    this.send({ t: 'abort', s: this.slot, id, message })
    this.unacked++
    this.proc!.watchAbort(this, WEDGED_SLACK_MS)
  }

  async dispose(): Promise<void> {
    this.disposed = true
    this.loaded = false
    const proc = this.proc
    this.proc = undefined
    this.loadWaiter?.reject(new Error('sandbox disposed'))
    this.loadWaiter = undefined
    this.flushAcks()
    await proc?.detach(this.slot)
  }

  // --- from the shared process ---
  message(m: ToParent): void {
    const e = this.events
    switch (m.t) {
      case 'result':
        e.result(m.id, m.json)
        break
      case 'failed':
        e.failed(m.id, m.reason, m.message)
        break
      case 'progress':
        e.progress(m.id, m.json)
        break
      case 'cap':
        e.cap(m.capId, m.id, m.op, m.args)
        break
      case 'log':
        e.log(m.level, m.msg, m.data)
        break
      case 'died':
        e.died(m.reason, m.message)
        this.moveOut()
        break
      case 'aborted':
        if (--this.unacked <= 0) this.flushAcks()
        break
      case 'loaded': {
        const w = this.loadWaiter
        this.loadWaiter = undefined
        this.loaded = true
        this.loadedAt = Date.now()
        w?.resolve(m.descriptor)
        break
      }
      case 'load-failed': {
        const w = this.loadWaiter
        this.loadWaiter = undefined
        this.leave()
        w?.reject(new Error(m.message))
        break
      }
    }
  }

  gone(d: ProcessDeath): void {
    this.proc = undefined
    const wasLoaded = this.loaded
    this.loaded = false
    if (this.loadWaiter !== undefined) {
      const w = this.loadWaiter
      this.loadWaiter = undefined
      w.reject(
        new PlatformError(PLUGINS_ERRORS.PLUGIN_LOAD_INTERRUPTED, {
          detail: `sandbox process exited while loading ${d.cause}`,
          blamed: d.blamed
        })
      )
    }
    if (!this.disposed && wasLoaded) {
      if (d.blamed) {
        const now = Date.now()
        this.crashes = now - this.loadedAt >= CRASH_RESET_MS ? 1 : this.crashes + 1
        this.notBefore =
          this.crashes < 2 ? 0 : now + Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (this.crashes - 2))
        this.alone = true
        this.events.exited(d.reason, `plugin '${this.data.name}' sandbox process died ${d.cause}`)
      } else {
        const who = d.culprit !== undefined ? `plugin '${d.culprit}' crashed it` : 'no plugin of it was running'
        this.events.exited(
          'crashed',
          `plugin '${this.data.name}' lost its shared sandbox process ${d.cause}; ${who}, and this plugin is reloaded on its next call`
        )
      }
    }
    this.flushAcks()
  }

  private async load(retry: boolean): Promise<unknown> {
    const proc = this.pool.place(this.alone)
    this.proc = proc
    this.slot = proc.attach(this)
    proc.hold(1)
    try {
      return await new Promise<unknown>((resolve, reject) => {
        try {
          proc.send({ t: 'load', s: this.slot, data: this.data })
        } catch (err) {
          reject(err as Error)
          return
        }
        this.loadWaiter = { resolve, reject }
      })
    } catch (err) {
      if (this.proc === proc) this.leave()
      // an innocent plugin caught in another plugin's crash during its load gets one more try
      if (
        isPlatformError(err, PLUGINS_ERRORS.PLUGIN_LOAD_INTERRUPTED) &&
        err.params.blamed !== true &&
        retry &&
        !this.disposed
      )
        return await this.load(false)
      throw err
    } finally {
      proc.hold(-1)
    }
  }

  /**
   * The isolate was reset for its time or memory limit: while it ran, it held the shared process's
   * one thread and delayed its mates' calls. It reloads into a process of its own on its next call.
   */
  private moveOut(): void {
    if (this.alone || this.pool.opts.pluginsPerProcess <= 1 || this.proc === undefined) return
    this.alone = true
    this.leave()
    if (this.inFlight() > 0)
      this.events.exited(
        'crashed',
        `plugin '${this.data.name}' moved to a sandbox process of its own after its isolate was reset`
      )
  }

  private leave(): void {
    const proc = this.proc
    this.proc = undefined
    this.loaded = false
    void proc?.detach(this.slot)
    this.flushAcks() // acknowledgements from a process it left are no longer delivered
  }

  private send(m: Parameters<SharedProcess['send']>[0]): void {
    const proc = this.proc
    if (proc === undefined || !this.loaded) throw new Error('sandbox process is not running')
    proc.send(m)
  }

  private flushAcks(): void {
    this.unacked = 0
    for (const w of this.ackWaiters.splice(0)) w()
  }
}
