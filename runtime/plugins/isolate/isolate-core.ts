import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import ivm from 'isolated-vm'
import { CALL_KEYS_MAX, PRELUDE } from './prelude.js'
import { SDK_SPECIFIER, checkInside, resolvePluginImport, sdkModule } from './module-resolver.js'
import { CallTable } from '../call-table.js'
import { watchdog, type Watchdog } from './watchdog.js'

/** Everything an isolate needs to load one plugin; plain data so it can cross a process boundary. */
export interface IsolateLoadData {
  name: string
  dir: string
  entry: string
  memoryMb: number
  timeoutMs: number
  maxResultBytes: number
  /** Which capabilities exist in the isolate's ctx (`env` carries the granted values). */
  grants: { kv: boolean; fetch: boolean; env?: Record<string, string> }
}

export type FailReason = 'threw' | 'timeout' | 'memory' | 'crashed' | 'invalid-result'

/**
 * Where the isolate's outputs go (the sandbox process forwards them over IPC;
 * in-process mode handles them directly).
 */
export interface IsolateSink {
  result(callId: number, json: string): void
  failed(callId: number, reason: FailReason, message: string): void
  progress(callId: number, json: string): void
  cap(capId: number, callId: number, op: string, argsJson: string): void
  log(level: string, msg: string, dataJson: string): void
  /** The isolate was disposed (memory, timeout, fatal error); it is recreated on the next call. */
  died(reason: FailReason, message: string): void
  /** Called right before plugin code runs (a shared sandbox process records whose isolate it enters). */
  enter?: () => void
}

const MAX_TIMERS = 1000

/**
 * One plugin in one isolated-vm isolate. All isolate entry is synchronous (`applySync`, watched by
 * the thread's watchdog for the calling call's remaining time budget) from one thread, so the
 * isolate never runs concurrently with itself and every piece of plugin code - microtasks included -
 * runs under a time limit. Loading keeps isolated-vm's own `timeout` (one timer entry per load).
 */
export class IsolateRunner {
  descriptor: unknown
  private iso: ivm.Isolate | undefined
  private readonly watch: Watchdog = watchdog()
  /** The isolate's slot in the watchdog while it is loaded. */
  private slot = -1
  private entries:
    { call: ivm.Reference; capDone: ivm.Reference; abort: ivm.Reference; fire: ivm.Reference } | undefined
  /** callId -> deadline (ms since epoch) */
  private readonly deadlines = new CallTable<number>()
  private readonly capOwner = new Map<number, number>()
  private timerCount = 0
  private readonly hostTimers = new Set<NodeJS.Timeout>()
  /**
   * The contributions called so far, by kind then name, numbered in call order. The isolate's
   * prelude numbers them the same way, so a call names a known one by number: two strings fewer to
   * copy into the isolate per call. Both lists start empty with each isolate.
   */
  private readonly keys = new Map<string, Map<string, number>>()
  private keyCount = 0
  /** Shared with the isolate: the call id and contribution number of the call being entered. */
  private ids: Float64Array | undefined

  constructor(
    readonly data: IsolateLoadData,
    private readonly sink: IsolateSink
  ) {}

  get alive(): boolean {
    return this.iso !== undefined && !this.iso.isDisposed
  }

  /**
   * Loaded and not disposed by us: the call path's check, without `isDisposed` (a native call).
   * isolated-vm disposes an isolate on its own only while plugin code runs, that is inside `enter`,
   * which then disposes it here too.
   */
  get loaded(): boolean {
    return this.entries !== undefined
  }

  /**
   * Creates the isolate and evaluates the plugin's module graph; returns the descriptor (parsed).
   * Throws a load error.
   */
  load(): unknown {
    const d = this.data
    this.sink.enter?.()
    const iso = new ivm.Isolate({ memoryLimit: Math.max(8, d.memoryMb) })
    this.iso = iso
    try {
      this.slot = this.watch.register(iso)
      const context = iso.createContextSync()
      const g = context.global
      const sink = this.sink
      g.setSync('globalThis', g.derefInto())
      context.evalSync('globalThis.__platformHost = {}')
      const hostObj = g.getSync('__platformHost', { reference: true }) as ivm.Reference
      hostObj.setSync(
        'done',
        new ivm.Callback((id: number, status: number, payload: string) => {
          this.settle(id, status, payload)
        })
      )
      hostObj.setSync(
        'progress',
        new ivm.Callback((id: number, json: string) => {
          if (this.deadlines.has(id)) sink.progress(id, String(json))
        })
      )
      hostObj.setSync(
        'cap',
        new ivm.Callback((capId: number, id: number, op: string, args: string) => {
          this.capOwner.set(capId, id)
          sink.cap(capId, id, String(op), String(args))
        })
      )
      hostObj.setSync(
        'log',
        new ivm.Callback((level: string, msg: string, data: string) => {
          sink.log(String(level), String(msg), String(data))
        })
      )
      hostObj.setSync(
        'timer',
        new ivm.Callback((id: number, ms: number) => {
          this.addTimer(id, ms)
        })
      )
      hostObj.setSync('maxResult', d.maxResultBytes)
      hostObj.setSync('capsJson', JSON.stringify(d.grants))
      const ids = new Float64Array(new SharedArrayBuffer(16))
      hostObj.setSync('ids', new ivm.ExternalCopy(ids.buffer).copyInto({ release: true }))
      this.ids = ids
      hostObj.release()
      const entries = context.evalSync(PRELUDE, {
        reference: true,
        timeout: d.timeoutMs,
        filename: 'platform:prelude'
      }) as ivm.Reference
      const ref = (k: string): ivm.Reference => entries.getSync(k, { reference: true }) as ivm.Reference
      this.entries = { call: ref('call'), capDone: ref('capDone'), abort: ref('abort'), fire: ref('fire') }
      const install = ref('install')

      // the module graph: the entry and what it imports inside the folder, plus the SDK (host-resolved)
      const byPath = new Map<string, ivm.Module>()
      const pathOf = new Map<ivm.Module, string>()
      const compile = (path: string, code: string): ivm.Module => {
        let m = byPath.get(path)
        if (m === undefined) {
          m = iso.compileModuleSync(code, { filename: pathToFileURL(path).href })
          byPath.set(path, m)
          pathOf.set(m, path)
        }
        return m
      }
      const sdk = sdkModule('sdk')
      const dispatchSrc = sdkModule('dispatch')
      const entryPath = checkInside(d.dir, d.entry, d.entry)
      const entry = compile(entryPath, readFileSync(entryPath, 'utf8'))
      const resolver = (specifier: string, referrer: ivm.Module): ivm.Module => {
        if (specifier === SDK_SPECIFIER) return compile(sdk.path, sdk.code)
        const from = pathOf.get(referrer)
        if (from === undefined) throw new Error(`import '${specifier}' refused: unknown referrer`)
        if (from === sdk.path || from === dispatchSrc.path)
          throw new Error(`import '${specifier}' refused inside the SDK`)
        const target = resolvePluginImport(d.dir, specifier, from)
        return compile(target, readFileSync(target, 'utf8'))
      }
      entry.instantiateSync(context, resolver)
      entry.evaluateSync({ timeout: d.timeoutMs })
      const dispatch = compile(dispatchSrc.path, dispatchSrc.code)
      dispatch.instantiateSync(context, (s) => {
        throw new Error(`import '${s}' refused`)
      })
      dispatch.evaluateSync({ timeout: d.timeoutMs })
      const json = install.applySync(undefined, [dispatch.namespace.derefInto(), entry.namespace.derefInto()], {
        timeout: d.timeoutMs
      }) as string
      this.descriptor = JSON.parse(json)
      return this.descriptor
    } catch (err) {
      this.disposeIsolate()
      throw new Error(loadMessage(err), { cause: err })
    }
  }

  /** Starts a call; the outcome arrives through the sink. */
  call(callId: number, kind: string, name: string, argsJson: string): void {
    if (this.entries === undefined) this.load()
    const deadline = Date.now() + this.data.timeoutMs
    this.deadlines.set(callId, deadline)
    const key = this.keyOf(kind, name)
    const ids = this.ids!
    ids[0] = callId
    let args: unknown[]
    if (typeof key === 'number') {
      ids[1] = key
      args = [argsJson]
    } else args = [argsJson, key]
    const out = this.enter(callId, this.entries!.call, args, deadline)
    // settled inside the call (a synchronous tool): its outcome came back as the return value
    if (typeof out === 'string' && out !== '') this.settle(callId, out.charCodeAt(0) - 48, out.slice(1))
  }

  /** A known contribution's number, or `kind NUL name` (numbered from now on, up to a bound). */
  private keyOf(kind: string, name: string): number | string {
    let byName = this.keys.get(kind)
    const n = byName?.get(name)
    if (n !== undefined) return n
    if (this.keyCount < CALL_KEYS_MAX) {
      if (byName === undefined) this.keys.set(kind, (byName = new Map()))
      byName.set(name, this.keyCount++)
    }
    return `${kind}\0${name}`
  }

  capDone(capId: number, ok: boolean, json: string): void {
    const callId = this.capOwner.get(capId)
    this.capOwner.delete(capId)
    const deadline = callId === undefined ? undefined : this.deadlines.get(callId)
    if (deadline === undefined || !this.alive) return
    // at least 1 ms, as a call whose host-side expiry has not fired yet may still take its result
    this.enter(callId, this.entries!.capDone, [capId, ok, json], Math.max(deadline, Date.now() + 1))
  }

  /** Cancels a call (timeout elsewhere, caller abort): the plugin's ctx.signal fires. */
  abort(callId: number, message: string): void {
    if (!this.deadlines.delete(callId) || !this.alive) return
    if (this.deadlines.size === 0) this.clearTimers()
    this.enter(undefined, this.entries!.abort, [callId, message], Date.now() + this.data.timeoutMs)
  }

  /** Timers never outlive the calls in flight (the isolate drops its callbacks at the same moment). */
  private clearTimers(): void {
    if (this.timerCount === 0) return
    for (const t of this.hostTimers) clearTimeout(t)
    this.hostTimers.clear()
    this.timerCount = 0
  }

  dispose(): void {
    this.disposeIsolate()
  }

  private settle(callId: number, status: number, payload: string): void {
    if (!this.deadlines.delete(callId)) return
    if (this.deadlines.size === 0) this.clearTimers()
    if (status === 0) this.sink.result(callId, String(payload))
    else this.sink.failed(callId, status === 2 ? 'invalid-result' : 'threw', String(payload))
  }

  private addTimer(id: number, ms: number): void {
    if (this.timerCount >= MAX_TIMERS) throw new Error(`too many pending timers (limit ${MAX_TIMERS})`)
    this.timerCount++
    const t = setTimeout(
      () => {
        this.hostTimers.delete(t)
        this.timerCount--
        if (this.alive && this.deadlines.size > 0)
          this.enter(undefined, this.entries!.fire, [id], Date.now() + this.data.timeoutMs)
      },
      Math.min(Number(ms) || 0, 2 ** 31 - 1)
    )
    t.unref()
    this.hostTimers.add(t)
  }

  /**
   * Runs plugin code synchronously until at most `deadline` (Date.now() ms: `callId`'s, or the plugin
   * timeout from now); a fatal outcome disposes the isolate and fails `callId` with the reason.
   */
  private enter(callId: number | undefined, fn: ivm.Reference, args: unknown[], deadline: number): unknown {
    this.sink.enter?.()
    const slot = this.slot
    let out: unknown
    let failure: unknown
    this.watch.begin(slot, deadline)
    try {
      out = fn.applySync(undefined, args)
    } catch (err) {
      failure = err ?? new Error('plugin code failed')
    }
    // the watchdog may also dispose it right as the entry returns: the call is past its limit either way
    if (this.watch.end()) {
      this.fatal(callId, 'timeout', `plugin '${this.data.name}' exceeded its time limit of ${this.data.timeoutMs} ms`)
      return undefined
    }
    if (failure === undefined) return out
    const msg = failure instanceof Error ? failure.message : String(failure)
    const reason: FailReason = /timed out/i.test(msg)
      ? 'timeout'
      : /memory limit|disposed/i.test(msg)
        ? 'memory'
        : 'crashed'
    const message =
      reason === 'timeout'
        ? `plugin '${this.data.name}' exceeded its time limit of ${this.data.timeoutMs} ms`
        : reason === 'memory'
          ? `plugin '${this.data.name}' exceeded its memory limit of ${this.data.memoryMb} MB`
          : `plugin '${this.data.name}' failed: ${msg}`
    this.fatal(callId, reason, message)
    return undefined
  }

  /** Disposes the isolate, fails the blamed call with `reason` and every other call in flight as crashed. */
  private fatal(callId: number | undefined, reason: FailReason, message: string): void {
    const inFlight = this.deadlines.ids()
    this.disposeIsolate()
    for (const id of inFlight) {
      if (id === callId) this.sink.failed(id, reason, message)
      else
        this.sink.failed(
          id,
          'crashed',
          `plugin '${this.data.name}' isolate was reset after a failure in another call: ${message}`
        )
    }
    this.sink.died(reason, message)
  }

  private disposeIsolate(): void {
    this.deadlines.clear()
    this.keys.clear()
    this.keyCount = 0
    this.capOwner.clear()
    this.clearTimers()
    this.entries = undefined
    if (this.slot >= 0) this.watch.unregister(this.slot)
    this.slot = -1
    const iso = this.iso
    this.iso = undefined
    if (iso !== undefined && !iso.isDisposed) {
      try {
        iso.dispose()
      } catch {
        /* already gone */
      }
    }
  }
}

function loadMessage(err: unknown): string {
  const msg =
    err instanceof Error
      ? err.name !== 'Error' && err.name !== ''
        ? `${err.name}: ${err.message}`
        : err.message
      : String(err)
  if (/timed out/i.test(msg)) return `loading the plugin exceeded its time limit: ${msg}`
  if (/memory limit/i.test(msg)) return `loading the plugin exceeded its memory limit: ${msg}`
  return msg
}
