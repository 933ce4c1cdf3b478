import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { randomUUID } from 'node:crypto'
import { BroadcastChannel } from 'node:worker_threads'
import { Piscina } from 'piscina'
import {
  pluginCallError,
  type InvokeOptions,
  type InvokeRequest,
  type LoadSpec,
  type PluginDescriptor,
  type SandboxInstance
} from '../contract.js'
import { parseResult } from '../json-result.js'
import { runCapability } from '../capability-call.js'
import { CallSlots } from '../call-slots.js'
import { openCall, takeSlot } from '../call-opening.js'
import { logPluginLine } from '../plugin-log-line.js'
import { Cancellation } from '../cancel.js'
import { encodeTask, type CapReply, type WorkerData, type WorkerToHost } from './protocol.js'
import type { PlatformError } from '../../contracts/index.js'

/** Largest JSON result (and progress message) a worker plugin may hand back unless its LoadSpec sets another. */
const DEFAULT_MAX_RESULT_BYTES = 16 * 1024 * 1024
/** Idle threads above minThreads stop after this long (piscina's default is immediately, which thrashes). */
const IDLE_TIMEOUT_MS = 30_000
/** `platform.sandbox.spin-us`'s default, for a spec that does not say. */
const DEFAULT_SPIN_US = 50
/** Calls handed to piscina at once (running or queued there); more wait in our queue. */
const MAX_IN_FLIGHT = 1024

const here = import.meta.url
const fromSource = here.endsWith('.ts')
// Run from TypeScript source (tests), threads use the compiled task module when `tsc` produced one,
// so each thread starts without the TypeScript loader.
const compiledTask = new URL('../../../dist/runtime/plugins/worker/worker-task.js', here)
const useCompiled = fromSource && existsSync(compiledTask)
const TASK = useCompiled ? compiledTask : new URL(`./worker-task${fromSource ? '.ts' : '.js'}`, here)
const HOOKS = useCompiled
  ? new URL('../../../dist/runtime/plugins/worker/sdk-hooks.js', here)
  : new URL(`./sdk-hooks${fromSource ? '.ts' : '.js'}`, here)
const SDK = import.meta.resolve('uws-agent-platform/sdk')

interface CallState {
  id: number
  slot: number
  onProgress: ((p: unknown) => void) | undefined
  /**
   * What piscina gets as the task's signal (it takes any addEventListener-shaped one):
   * much cheaper than an AbortController per call.
   */
  abort: Cancellation
  timedOut: boolean
  /** Messages of this call received so far, and how many the worker said it sent (-1 until the result). */
  received: number
  expected: number
  onAll: (() => void) | undefined
}

class WorkerInstance implements SandboxInstance {
  readonly kind = 'worker' as const
  descriptor!: PluginDescriptor
  readonly pool: Piscina
  private disposed = false
  private readonly name: string
  private readonly timeoutMs: number
  private readonly channel: BroadcastChannel
  private readonly starts: Float64Array
  private readonly freeSlots: number[]
  private readonly slots = new CallSlots(MAX_IN_FLIGHT)
  private readonly calls = new Map<number, CallState>()
  private nextId = 1
  /**
   * One timer for all calls in flight, armed for the earliest time limit that can expire: a timer
   * per call cost a list insert and removal each, the largest of the tier's own host-side costs.
   * Not `Deadlines`: a limit here counts from when the thread starts the task, which the host
   * learns only from `starts`, so limits do not fall in the order calls were made.
   */
  private sweepTimer: NodeJS.Timeout | undefined
  private readonly sweep = (): void => {
    this.sweepTimer = undefined
    this.sweepTimeouts()
  }

  constructor(private readonly spec: LoadSpec) {
    this.name = spec.manifest.name
    const { limits } = spec.grant
    this.timeoutMs = limits.timeoutMs
    const caps = spec.capabilities
    const channelName = `platform-plugin-${randomUUID()}`
    const startsBuf = new SharedArrayBuffer(8 * MAX_IN_FLIGHT)
    this.starts = new Float64Array(startsBuf)
    this.freeSlots = Array.from({ length: MAX_IN_FLIGHT }, (_, i) => MAX_IN_FLIGHT - 1 - i)
    this.channel = new BroadcastChannel(channelName)
    this.channel.onmessage = (ev: unknown) => {
      this.fromWorker((ev as { data: WorkerToHost }).data)
    }
    this.channel.unref()
    const workerData: WorkerData = {
      name: this.name,
      entry: spec.entry,
      sdk: SDK,
      hooks: HOOKS.href,
      loadId: `${Date.now()}-${Math.random()}`,
      channel: channelName,
      starts: startsBuf,
      maxResultBytes: spec.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      spinUs: spec.spinUs ?? DEFAULT_SPIN_US,
      grants: {
        kv: caps.kv !== undefined,
        fetch: caps.fetch !== undefined,
        ...(caps.env !== undefined ? { env: { ...caps.env } } : {})
      }
    }
    this.pool = new Piscina({
      filename: TASK.href,
      workerData,
      minThreads: 1,
      // threads beyond the cores only thrash (64 threads on 2 cores served 4k calls/s); calls
      // beyond the threads wait in piscina's queue, and CallSlots still caps them at `concurrency`
      maxThreads: Math.max(1, Math.min(limits.concurrency, availableParallelism())),
      idleTimeout: IDLE_TIMEOUT_MS,
      concurrentTasksPerWorker: 1,
      // piscina records every task's wait and run time in two histograms unless told not to; nothing reads them
      recordTiming: false,
      resourceLimits: {
        maxOldGenerationSizeMb: limits.memoryMb,
        maxYoungGenerationSizeMb: Math.max(1, Math.min(16, Math.floor(limits.memoryMb / 4))),
        stackSizeMb: 4
      },
      ...(useCompiled ? { execArgv: [] } : {})
    })
    // a thread that dies is replaced by piscina; the failed call reports it, this keeps it off the console
    this.pool.on('error', (err: unknown) => {
      spec.capabilities.log.warn({ err, plugin: this.name }, 'plugin worker thread error')
    })
  }

  async load(): Promise<void> {
    const out = (await this.pool.run(
      {},
      { name: 'describeTask', signal: AbortSignal.timeout(Math.max(this.timeoutMs, 10_000)) }
    )) as string
    if (out[0] !== '0') throw new Error(out.slice(1))
    this.descriptor = JSON.parse(out.slice(1)) as PluginDescriptor
  }

  async invoke(req: InvokeRequest, opts: InvokeOptions = {}): Promise<unknown> {
    const signal = opts.signal
    const args = openCall(this.name, this.disposed, req, signal)
    const wait = takeSlot(this.name, this.slots, signal)
    if (wait !== undefined) await wait
    const slot = this.freeSlots.pop()!
    this.starts[slot] = 0
    const abort = new Cancellation()
    const s: CallState = {
      id: this.nextId++,
      slot,
      onProgress: opts.onProgress,
      abort,
      timedOut: false,
      received: 0,
      expected: -1,
      onAll: undefined
    }
    this.calls.set(s.id, s)
    // a call that starts now cannot expire before the limit the armed timer waits for
    this.sweepTimer ??= setTimeout(this.sweep, this.timeoutMs)
    const onCallerAbort =
      signal !== undefined
        ? () => {
            abort.abort('cancelled')
          }
        : undefined
    if (onCallerAbort !== undefined) signal!.addEventListener('abort', onCallerAbort, { once: true })
    let out: string
    let colon: number
    try {
      const task = encodeTask(s.id, slot, req.kind, req.name, args)
      out = (await this.pool.run(task, { signal: abort as never })) as string
      // results travel on piscina's channel, progress on the BroadcastChannel: settle after the call's last message
      colon = out.indexOf(':')
      s.expected = Number(out.slice(1, colon))
      if (s.received < s.expected)
        await new Promise<void>((resolve) => {
          s.onAll = resolve
        })
    } catch (err) {
      throw this.failure(err, s.timedOut)
    } finally {
      if (onCallerAbort !== undefined) signal!.removeEventListener('abort', onCallerAbort)
      this.calls.delete(s.id)
      this.freeSlots.push(slot)
      this.slots.release()
    }
    // the payload is sliced once: rebuilding `<status><payload>` first copied a large result twice
    const payload = out.slice(colon + 1)
    const status = out.charCodeAt(0)
    if (status === 48 /* '0' */) {
      try {
        return parseResult(payload)
      } catch (err) {
        throw this.counted(
          'invalid-result',
          `plugin '${this.name}' returned an invalid result: ${(err as Error).message}`
        )
      }
    }
    if (status === 50 /* '2' */) throw this.counted('invalid-result', payload)
    throw pluginCallError(this.name, 'threw', `plugin '${this.name}' threw: ${payload}`)
  }

  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    this.slots.close(pluginCallError(this.name, 'unavailable', `plugin '${this.name}' was unloaded`))
    this.channel.close()
    clearTimeout(this.sweepTimer)
    this.sweepTimer = undefined
    await this.pool.destroy()
  }

  /**
   * Stops the calls past their time limit, which counts from when the task started running in a
   * thread (queueing and thread start-up excluded), and re-arms for the next limit to come.
   */
  private sweepTimeouts(): void {
    if (this.disposed) return
    const now = Date.now()
    let next = Infinity
    for (const s of this.calls.values()) {
      if (s.timedOut) continue
      const started = this.starts[s.slot]!
      const left = started === 0 ? this.timeoutMs : started + this.timeoutMs - now
      if (left > 0) {
        if (left < next) next = left
        continue
      }
      s.timedOut = true
      s.abort.abort('timeout')
    }
    // with no call left it is not re-armed; the timer of the last sweep fires once with nothing to do
    if (next !== Infinity) this.sweepTimer = setTimeout(this.sweep, next)
  }

  /** Messages from the pool's threads: progress, log lines, capability requests. */
  private fromWorker(m: WorkerToHost): void {
    if (m.t === 'log') {
      logPluginLine(this.spec.capabilities.log, this.name, m.level, m.msg, m.data)
      return
    }
    const s = this.calls.get(m.id)
    if (s === undefined) return
    switch (m.t) {
      case 'progress':
        if (s.onProgress !== undefined) {
          try {
            s.onProgress(parseResult(m.json))
          } catch (err) {
            this.spec.capabilities.log.warn({ err, plugin: this.name }, 'progress listener failed')
          }
        }
        break
      case 'cap': {
        const reply = (ok: boolean, json: string): void => {
          if (!this.disposed) this.channel.postMessage({ id: m.id, capId: m.capId, ok, json } satisfies CapReply)
        }
        runCapability(this.spec.capabilities, m.op, m.args).then(
          (json) => {
            reply(true, json)
          },
          (err: unknown) => {
            reply(false, err instanceof Error ? err.message : String(err))
          }
        )
        break
      }
    }
    if (++s.received === s.expected) s.onAll?.()
  }

  private failure(err: unknown, timedOut: boolean): PlatformError {
    const e = err as { code?: string; name?: string; message?: string }
    if (timedOut)
      return this.counted('timeout', `plugin '${this.name}' exceeded its time limit of ${this.timeoutMs} ms`)
    if (e?.name === 'AbortError')
      return pluginCallError(this.name, 'cancelled', `call to plugin '${this.name}' was cancelled`)
    if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY')
      return this.counted(
        'memory',
        `plugin '${this.name}' exceeded its memory limit of ${this.spec.grant.limits.memoryMb} MB`
      )
    if (this.disposed) return pluginCallError(this.name, 'unavailable', `plugin '${this.name}' was unloaded`)
    return this.counted('crashed', `plugin '${this.name}' worker died: ${e?.message ?? String(err)}`)
  }

  private counted(reason: 'timeout' | 'memory' | 'crashed' | 'invalid-result', message: string): PlatformError {
    this.spec.metrics?.pluginFailures.inc({ plugin: this.name, reason })
    if (reason !== 'invalid-result')
      this.spec.capabilities.log.error(
        { plugin: this.name, sandbox: 'worker', reason },
        `plugin worker call failed: ${message}`
      )
    return pluginCallError(this.name, reason, message)
  }
}

/**
 * The worker tier: one piscina pool per plugin (threads from the concurrency limit, V8 resource
 * limits from the memory limit, per-call timeout through AbortSignal). A thread that exits, runs
 * out of memory or never answers fails only its own call and is replaced. Rejects with the load error.
 */
export async function loadWorker(spec: LoadSpec): Promise<SandboxInstance> {
  const inst = new WorkerInstance(spec)
  try {
    await inst.load()
  } catch (err) {
    await inst.dispose()
    const e = err as Error
    throw new Error(
      `plugin '${spec.manifest.name}' failed to load in the worker sandbox: ${e.name === 'AbortError' ? 'loading timed out' : e.message}`,
      { cause: err }
    )
  }
  return inst
}
