import { existsSync } from 'node:fs'
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { Piscina } from 'piscina'
import { PluginCallError, type InvokeOptions, type InvokeRequest, type LoadSpec, type PluginDescriptor, type SandboxInstance } from '../contract.js'
import { parseResult } from '../json-result.js'
import { runCapability } from '../capability-call.js'
import type { CapReply, WorkerData, WorkerToHost } from './protocol.js'

/** Largest JSON result (and progress message) a worker plugin may hand back unless the spec sets another. */
const DEFAULT_MAX_RESULT_BYTES = 16 * 1024 * 1024
/** Idle threads above minThreads stop after this long (piscina's default is immediately, which thrashes). */
const IDLE_TIMEOUT_MS = 30_000
const LOG_LEVELS = new Set(['debug', 'info', 'warn', 'error'])

const here = import.meta.url
const fromSource = here.endsWith('.ts')
// Run from TypeScript source (tests), threads use the compiled task module when `tsc` produced one,
// so each thread starts without the TypeScript loader.
const compiledTask = new URL('../../../dist/runtime/plugins/worker/worker-task.js', here)
const useCompiled = fromSource && existsSync(compiledTask)
const TASK = useCompiled ? compiledTask : new URL(`./worker-task${fromSource ? '.ts' : '.js'}`, here)
const HOOKS = useCompiled ? new URL('../../../dist/runtime/plugins/worker/sdk-hooks.js', here) : new URL(`./sdk-hooks${fromSource ? '.ts' : '.js'}`, here)
const SDK = import.meta.resolve('agent-platform/sdk')

/** What a call's port listener needs, kept on the port so no closure is made per message. */
interface CallState { inst: WorkerInstance, onProgress: ((p: unknown) => void) | undefined, port: MessagePort, abort: AbortController, timer: NodeJS.Timeout | undefined, timedOut: boolean }
const stateOf = new WeakMap<MessagePort, CallState>()

function onPortMessage (this: MessagePort, m: WorkerToHost): void {
  const s = stateOf.get(this)
  if (s !== undefined) s.inst.fromWorker(s, m)
}

function timeOut (s: CallState): void { s.timedOut = true; s.abort.abort() }

class WorkerInstance implements SandboxInstance {
  readonly kind = 'worker' as const
  descriptor!: PluginDescriptor
  readonly pool: Piscina
  private disposed = false
  private readonly name: string

  constructor (private readonly spec: LoadSpec) {
    this.name = spec.manifest.name
    const { limits } = spec.grant
    const caps = spec.capabilities
    const workerData: WorkerData = {
      name: this.name,
      entry: spec.entry,
      sdk: SDK,
      hooks: HOOKS.href,
      loadId: `${Date.now()}-${Math.random()}`,
      maxResultBytes: spec.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      grants: { kv: caps.kv !== undefined, fetch: caps.fetch !== undefined, ...(caps.env !== undefined ? { env: { ...caps.env } } : {}) }
    }
    const concurrency = Math.max(1, limits.concurrency)
    this.pool = new Piscina({
      filename: TASK.href,
      workerData,
      minThreads: 1,
      maxThreads: concurrency,
      idleTimeout: IDLE_TIMEOUT_MS,
      concurrentTasksPerWorker: 1,
      resourceLimits: {
        maxOldGenerationSizeMb: limits.memoryMb,
        maxYoungGenerationSizeMb: Math.max(1, Math.min(16, Math.floor(limits.memoryMb / 4))),
        stackSizeMb: 4
      },
      ...(useCompiled ? { execArgv: [] } : {})
    })
    // a thread that dies is replaced by piscina; the failed call reports it, this keeps it off the console
    this.pool.on('error', (err: unknown) => { spec.capabilities.log.warn({ err, plugin: this.name }, 'plugin worker thread error') })
  }

  async load (): Promise<void> {
    const out = await this.pool.run({}, { name: 'describeTask', signal: AbortSignal.timeout(Math.max(this.spec.grant.limits.timeoutMs, 10_000)) }) as string
    if (out[0] !== '0') throw new Error(out.slice(1))
    this.descriptor = JSON.parse(out.slice(1)) as PluginDescriptor
  }

  async invoke (req: InvokeRequest, opts: InvokeOptions = {}): Promise<unknown> {
    if (this.disposed) throw new PluginCallError(this.name, 'unavailable', `plugin '${this.name}' was unloaded`)
    if (opts.signal?.aborted === true) throw new PluginCallError(this.name, 'cancelled', `call to plugin '${this.name}' was cancelled`)
    let args: string
    try { args = req.args === undefined ? '' : JSON.stringify(req.args) } catch (err) { throw new PluginCallError(this.name, 'invalid-result', `arguments are not JSON: ${(err as Error).message}`) }
    const { port1, port2 } = new MessageChannel()
    const abort = new AbortController()
    const state: CallState = { inst: this, onProgress: opts.onProgress, port: port1, abort, timer: undefined, timedOut: false }
    stateOf.set(port1, state)
    port1.on('message', onPortMessage)
    const signal = opts.signal !== undefined ? AbortSignal.any([abort.signal, opts.signal]) : abort.signal
    let out: string
    try {
      out = await this.pool.run({ kind: req.kind, name: req.name, args, port: port2 }, { transferList: [port2] as never, signal }) as string
    } catch (err) {
      throw this.failure(err, state.timedOut)
    } finally {
      if (state.timer !== undefined) clearTimeout(state.timer)
      port1.close()
    }
    const payload = out.slice(1)
    if (out[0] === '0') {
      try { return parseResult(payload) } catch (err) { throw this.counted('invalid-result', `plugin '${this.name}' returned an invalid result: ${(err as Error).message}`) }
    }
    if (out[0] === '2') throw this.counted('invalid-result', payload)
    throw new PluginCallError(this.name, 'threw', `plugin '${this.name}' threw: ${payload}`)
  }

  /** Messages from the worker during one call: progress, log lines, capability requests. */
  fromWorker (s: CallState, m: WorkerToHost): void {
    switch (m.t) {
      case 'start':
        s.timer = setTimeout(timeOut, this.spec.grant.limits.timeoutMs, s)
        break
      case 'progress':
        if (s.onProgress !== undefined) { try { s.onProgress(parseResult(m.json)) } catch (err) { this.spec.capabilities.log.warn({ err, plugin: this.name }, 'progress listener failed') } }
        break
      case 'log': {
        let fields: Record<string, unknown> = {}
        try { const d = JSON.parse(m.data) as unknown; if (d !== null && typeof d === 'object' && !Array.isArray(d)) fields = d as Record<string, unknown> } catch { /* dropped */ }
        this.spec.capabilities.log[LOG_LEVELS.has(m.level) ? m.level as 'info' : 'info']({ ...fields, plugin: this.name }, m.msg)
        break
      }
      case 'cap': {
        const reply = (ok: boolean, json: string): void => { try { s.port.postMessage({ t: 'cap', capId: m.capId, ok, json } satisfies CapReply) } catch { /* call ended */ } }
        runCapability(this.spec.capabilities, m.op, m.args).then((json) => { reply(true, json) }, (err: unknown) => { reply(false, err instanceof Error ? err.message : String(err)) })
        break
      }
    }
  }

  async dispose (): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    await this.pool.destroy()
  }

  private failure (err: unknown, timedOut: boolean): PluginCallError {
    const e = err as { code?: string, name?: string, message?: string }
    if (timedOut) return this.counted('timeout', `plugin '${this.name}' exceeded its time limit of ${this.spec.grant.limits.timeoutMs} ms`)
    if (e?.name === 'AbortError') return new PluginCallError(this.name, 'cancelled', `call to plugin '${this.name}' was cancelled`)
    if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') return this.counted('memory', `plugin '${this.name}' exceeded its memory limit of ${this.spec.grant.limits.memoryMb} MB`)
    if (this.disposed) return new PluginCallError(this.name, 'unavailable', `plugin '${this.name}' was unloaded`)
    return this.counted('crashed', `plugin '${this.name}' worker died: ${e?.message ?? String(err)}`)
  }

  private counted (reason: 'timeout' | 'memory' | 'crashed' | 'invalid-result', message: string): PluginCallError {
    this.spec.metrics?.pluginFailures.inc({ plugin: this.name, reason })
    if (reason !== 'invalid-result') this.spec.capabilities.log.error({ plugin: this.name, sandbox: 'worker', reason }, `plugin worker call failed: ${message}`)
    return new PluginCallError(this.name, reason, message)
  }
}

/**
 * The worker tier: one piscina pool per plugin (threads from the concurrency limit, V8 resource
 * limits from the memory limit, per-call timeout through AbortSignal). A thread that exits, runs
 * out of memory or never answers fails only its own call and is replaced. Rejects with the load error.
 */
export async function loadWorker (spec: LoadSpec): Promise<SandboxInstance> {
  const inst = new WorkerInstance(spec)
  try {
    await inst.load()
  } catch (err) {
    await inst.dispose()
    const e = err as Error
    throw new Error(`plugin '${spec.manifest.name}' failed to load in the worker sandbox: ${e.name === 'AbortError' ? 'loading timed out' : e.message}`)
  }
  return inst
}
