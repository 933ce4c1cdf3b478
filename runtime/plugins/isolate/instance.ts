import {
  pluginCallError,
  type InvokeOptions,
  type InvokeRequest,
  type LoadSpec,
  type PluginDescriptor,
  type SandboxInstance
} from '../contract.js'
import type { FailReason } from './isolate-core.js'
import type { IsolateBackend } from './backends.js'
import { CallSlots } from '../call-slots.js'
import { CallTable } from '../call-table.js'
import type { CancelSignal } from '../cancel.js'
import { Deadlines } from '../deadlines.js'
import { parseResult } from '../json-result.js'
import { runCapability } from '../capability-call.js'
import { openCall, takeSlot } from '../call-opening.js'
import { logPluginLine } from '../plugin-log-line.js'
import type { PlatformError } from '../../contracts/index.js'

interface Pending {
  /**
   * Set once the caller waits. A call that settles inside `backend.call` (a synchronous tool in an
   * in-process isolate) keeps its outcome in `done`/`value` instead, and costs no promise.
   */
  resolve: ((v: unknown) => void) | undefined
  reject: ((e: Error) => void) | undefined
  done: 'no' | 'resolved' | 'rejected'
  value: unknown
  onProgress: ((p: unknown) => void) | undefined
  signal: CancelSignal | undefined
  onAbort: (() => void) | undefined
}

/**
 * A plugin in the isolate tier: the host-side half. Queues calls beyond the concurrency limit,
 * holds the per-call time limit, answers capability requests, turns results (JSON text) into
 * values and failures into PLUGIN_CALL_FAILED, and restarts a dead isolate on the next call.
 */
export class IsolateInstance implements SandboxInstance {
  readonly kind = 'isolate' as const
  descriptor!: PluginDescriptor
  backend!: IsolateBackend
  private readonly pending = new CallTable<Pending>()
  private readonly slots: CallSlots
  private readonly deadlines: Deadlines<number>
  private nextId = 1
  private disposed = false
  private readonly name: string

  constructor(private readonly spec: LoadSpec) {
    this.name = spec.manifest.name
    this.slots = new CallSlots(spec.grant.limits.concurrency)
    this.deadlines = new Deadlines(spec.grant.limits.timeoutMs, (id) => {
      this.cancel(
        id,
        'timeout',
        `plugin '${this.name}' exceeded its time limit of ${this.spec.grant.limits.timeoutMs} ms`
      )
    })
  }

  /** Calls handed to the backend and not settled yet. */
  get inFlight(): number {
    return this.pending.size
  }

  // --- events from the backend (isolate sink) ---
  result(id: number, json: string): void {
    const p = this.take(id)
    if (p === undefined) return
    let value: unknown
    try {
      value = parseResult(json)
    } catch (err) {
      reject(
        p,
        this.failure('invalid-result', `plugin '${this.name}' returned an invalid result: ${(err as Error).message}`)
      )
      return
    }
    resolve(p, value)
  }

  failed(id: number, reason: FailReason, message: string): void {
    const p = this.take(id)
    if (p !== undefined)
      reject(p, this.failure(reason, reason === 'threw' ? `plugin '${this.name}' threw: ${message}` : message))
  }

  progress(id: number, json: string): void {
    const p = this.pending.get(id)
    if (p?.onProgress === undefined) return
    try {
      p.onProgress(parseResult(json))
    } catch (err) {
      this.spec.capabilities.log.warn({ err, plugin: this.name }, 'progress listener failed')
    }
  }

  cap(capId: number, id: number, op: string, args: string): void {
    if (!this.pending.has(id)) {
      this.safe(() => {
        this.backend.capDone(capId, false, 'the call has ended')
      })
      return
    }
    runCapability(this.spec.capabilities, op, args).then(
      (json) => {
        this.safe(() => {
          this.backend.capDone(capId, true, json)
        })
      },
      (err: unknown) => {
        this.safe(() => {
          this.backend.capDone(capId, false, err instanceof Error ? err.message : String(err))
        })
      }
    )
  }

  log(level: string, msg: string, data: string): void {
    logPluginLine(this.spec.capabilities.log, this.name, level, msg, data)
  }

  /** The isolate was disposed and recreated on next use; it already failed its own calls in flight. */
  died(reason: FailReason, message: string): void {
    this.spec.capabilities.log.error(
      { plugin: this.name, sandbox: 'isolate', reason },
      `plugin isolate disposed: ${message}`
    )
  }

  /** The sandbox process died: every call in flight is lost; the next call restarts it. */
  exited(reason: FailReason, message: string): void {
    this.spec.capabilities.log.error(
      { plugin: this.name, sandbox: 'isolate', reason },
      `plugin sandbox process died: ${message}`
    )
    for (const id of this.pending.ids()) this.failed(id, reason === 'threw' ? 'crashed' : reason, message)
  }

  // --- SandboxInstance ---
  async invoke(req: InvokeRequest, opts: InvokeOptions = {}): Promise<unknown> {
    const signal = opts.signal
    const argsJson = openCall(this.name, this.disposed, req, signal)
    const wait = takeSlot(this.name, this.slots, signal)
    if (wait !== undefined) await wait
    try {
      if (!this.backend.ready) {
        try {
          await this.backend.start()
        } catch (err) {
          throw pluginCallError(
            this.name,
            'unavailable',
            `plugin '${this.name}' could not be restarted: ${(err as Error).message}`
          )
        }
      }
      if (isAborted(signal))
        throw pluginCallError(this.name, 'cancelled', `call to plugin '${this.name}' was cancelled`)
      const id = this.nextId++
      const p: Pending = {
        resolve: undefined,
        reject: undefined,
        done: 'no',
        value: undefined,
        onProgress: opts.onProgress,
        signal,
        onAbort: undefined
      }
      this.pending.set(id, p)
      try {
        this.backend.call(id, req.kind, req.name, argsJson)
      } catch (err) {
        this.failed(id, 'crashed', `plugin '${this.name}' is not running: ${(err as Error).message}`)
      }
      // settled synchronously (in-process isolate)
      if (p.done === 'resolved') return p.value
      if (p.done === 'rejected') throw p.value as Error
      this.deadlines.add(id)
      if (signal !== undefined) {
        p.onAbort = () => {
          this.cancel(id, 'cancelled', `call to plugin '${this.name}' was cancelled`)
        }
        signal.addEventListener('abort', p.onAbort, { once: true })
      }
      return await new Promise((res, rej) => {
        p.resolve = res
        p.reject = rej
      })
    } finally {
      this.slots.release()
    }
  }

  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    for (const id of this.pending.ids()) {
      const p = this.take(id)
      if (p !== undefined)
        reject(p, pluginCallError(this.name, 'unavailable', `plugin '${this.name}' was unloaded while the call ran`))
    }
    this.slots.close(pluginCallError(this.name, 'unavailable', `plugin '${this.name}' was unloaded`))
    this.deadlines.clear()
    await this.backend.dispose()
  }

  private cancel(id: number, reason: 'timeout' | 'cancelled', message: string): void {
    const p = this.take(id)
    if (p === undefined) return
    reject(p, reason === 'timeout' ? this.failure(reason, message) : pluginCallError(this.name, reason, message))
    this.safe(() => {
      this.backend.abort(id, reason === 'timeout' ? 'timed out' : 'cancelled')
    })
  }

  private take(id: number): Pending | undefined {
    const p = this.pending.get(id)
    if (p === undefined) return undefined
    this.pending.delete(id)
    this.deadlines.delete(id)
    if (p.onAbort !== undefined) p.signal!.removeEventListener('abort', p.onAbort)
    return p
  }

  /** Every failed call is counted once by reason, except the plugin's own throws. */
  private failure(reason: FailReason, message: string): PlatformError {
    if (reason !== 'threw') this.spec.metrics?.pluginFailures.inc({ plugin: this.name, reason })
    return pluginCallError(this.name, reason, message)
  }

  private safe(fn: () => void): void {
    try {
      fn()
    } catch {
      /* the backend is gone; its exit handler fails what is in flight */
    }
  }
}

function resolve(p: Pending, value: unknown): void {
  if (p.resolve !== undefined) p.resolve(value)
  else {
    p.done = 'resolved'
    p.value = value
  }
}

function reject(p: Pending, err: Error): void {
  if (p.reject !== undefined) p.reject(err)
  else {
    p.done = 'rejected'
    p.value = err
  }
}

/** Re-reads `aborted` after an await (a plain property read TypeScript would narrow away). */
function isAborted(signal: CancelSignal | undefined): boolean {
  return signal?.aborted === true
}
