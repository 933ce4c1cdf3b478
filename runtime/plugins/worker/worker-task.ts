/**
 * The piscina task module of the worker tier: loads the plugin entry once per thread and runs one
 * contribution per task through the shared SDK dispatch. Capabilities (kv, fetch) go to the host
 * over the pool's BroadcastChannel even though the thread has Node APIs: grants stay enforced by the host.
 */
import { register } from 'node:module'
import { pathToFileURL } from 'node:url'
import { BroadcastChannel, workerData } from 'node:worker_threads'
import { describePlugin, startContribution } from 'uws-agent-platform/sdk/dispatch'
import { isPromise } from '../../contracts/index.js'
import { TEXT_MARK } from '../json-result.js'
import { decodeTask, type CapReply, type WorkerData, type WorkerTask, type WorkerToHost } from './protocol.js'
import { spinBeforeSleep } from './spin-wait.js'

const data = workerData as WorkerData
register(data.hooks, { data: { sdk: data.sdk } })
const starts = new Float64Array(data.starts)
const channel = new BroadcastChannel(data.channel)
const waiting = new Map<number, { id: number; resolve: (v: unknown) => void; reject: (e: Error) => void }>()
let nextCap = 1
channel.onmessage = (ev: unknown) => {
  const m = (ev as { data: CapReply }).data
  if (typeof m?.capId !== 'number') return
  const w = waiting.get(m.capId)
  if (w === undefined || w.id !== m.id) return
  waiting.delete(m.capId)
  if (m.ok) w.resolve(m.json === '' ? undefined : JSON.parse(m.json))
  else w.reject(new Error(m.json))
}
channel.unref()
spinBeforeSleep(data.spinUs)

let plugin: Promise<unknown> | undefined
/** The entry's default export once loaded: calls after the first start without awaiting it. */
let loaded: { def: unknown } | undefined
const load = (): Promise<unknown> =>
  (plugin ??= import(`${pathToFileURL(data.entry).href}?v=${data.loadId}`).then((m: { default?: unknown }) => {
    loaded = { def: m.default }
    return m.default
  }))

function describe(e: unknown): string {
  try {
    if (e instanceof Error) return (e.name !== '' && e.name !== 'Error' ? `${e.name}: ` : '') + String(e.message)
    if (typeof e === 'string') return e
    if (e === undefined) return 'plugin threw undefined'
    const s = JSON.stringify(e)
    return `plugin threw a non-Error value: ${(s === undefined ? String(e) : s).slice(0, 1000)}`
  } catch {
    return 'plugin threw a value that cannot be described'
  }
}

const mb = (n: number): string => (n / 1048576).toFixed(1)

function toJson(value: unknown): string {
  const max = data.maxResultBytes
  if (typeof value === 'string')
    // a string answers as itself after the text mark: no JSON here nor in the host
    return value.length > max
      ? `2result too large: ${mb(value.length)} MB, the limit is ${mb(max)} MB`
      : '0' + TEXT_MARK + value
  let s: string | undefined
  try {
    s = JSON.stringify(value === undefined ? null : value)
  } catch (e) {
    return `2result is not a JSON value: ${describe(e)}`
  }
  if (s === undefined) s = 'null'
  if (s.length > max) return `2result too large: ${mb(s.length)} MB of JSON, the limit is ${mb(max)} MB`
  return '0' + s
}

interface Call {
  id: number
  sent: number
  done: boolean
}

function post(call: Call, m: WorkerToHost): void {
  if (call.done) return
  call.sent++
  channel.postMessage(m)
}

// Shared by every call of this thread: log lines are not tied to a call (id 0, not counted), and a
// worker call is stopped by terminating its thread, so the signal never fires.
const logger = (level: string) => (msg: unknown, d?: unknown) => {
  try {
    channel.postMessage({
      id: 0,
      t: 'log',
      level,
      msg: String(msg).slice(0, 8192),
      data: d === undefined ? '{}' : JSON.stringify(d)
    } satisfies WorkerToHost)
  } catch {
    /* unserialisable log data */
  }
}
const sharedLog = Object.freeze({
  debug: logger('debug'),
  info: logger('info'),
  warn: logger('warn'),
  error: logger('error')
})
const neverAborted = new AbortController().signal
const sharedEnv = data.grants.env !== undefined ? Object.freeze({ ...data.grants.env }) : undefined

function capOf(call: Call): (op: string, args: unknown[]) => Promise<unknown> {
  const id = call.id
  return (op, args) =>
    new Promise((resolve, reject) => {
      if (call.done) {
        reject(new Error('the call has ended'))
        return
      }
      const capId = nextCap++
      waiting.set(capId, { id, resolve, reject })
      post(call, { id, t: 'cap', capId, op, args: JSON.stringify(args) })
    })
}

function makeCtx(call: Call, cap: (op: string, args: unknown[]) => Promise<unknown>): Record<string, unknown> {
  const id = call.id
  const ctx: Record<string, unknown> = {
    log: sharedLog,
    signal: neverAborted,
    progress(partial: unknown) {
      const s = JSON.stringify(partial === undefined ? null : partial)
      if (s.length <= data.maxResultBytes) post(call, { id, t: 'progress', json: s })
    }
  }
  const g = data.grants
  if (g.kv) {
    ctx.kv = Object.freeze({
      get: (key: unknown) => cap('kv.get', [String(key)]),
      put: (key: unknown, value: unknown) => cap('kv.put', [String(key), value]),
      delete: (key: unknown) => cap('kv.delete', [String(key)]),
      list: (prefix?: unknown) => cap('kv.list', [prefix === undefined ? '' : String(prefix)])
    })
  }
  if (g.fetch) {
    ctx.fetch = async (url: unknown, init?: unknown) => {
      const r = (await cap('fetch', [String(url), init ?? {}])) as { text: string }
      return { ...r, json: () => JSON.parse(r.text) as unknown }
    }
  }
  if (sharedEnv !== undefined) ctx.env = sharedEnv
  return Object.freeze(ctx)
}

/** Loads the entry and reports its descriptor (JSON text), or `1<message>`. */
export async function describeTask(): Promise<string> {
  try {
    return '0' + JSON.stringify(describePlugin(await load()))
  } catch (e) {
    return '1' + describe(e)
  }
}

/**
 * Runs one call. A contribution that answers at once is answered in the same turn (no promise, no
 * microtask between the plugin's return and piscina's reply); a promise is awaited.
 */
export default function runTask(encoded: string): string | Promise<string> {
  const task = decodeTask(encoded)
  const call: Call = { id: task.id, sent: 0, done: false }
  if (loaded === undefined)
    return load().then(
      () => start(task, call),
      (e: unknown) => finish(call, '1' + describe(e))
    )
  return start(task, call)
}

function start(task: WorkerTask, call: Call): string | Promise<string> {
  let value: unknown
  try {
    const cap = capOf(call)
    // the call's time limit starts now: thread start-up and module loading are not the call's time
    starts[task.slot] = Date.now()
    value = startContribution(
      loaded!.def as never,
      { kind: task.kind, name: task.name, args: task.args === '' ? undefined : JSON.parse(task.args) },
      makeCtx(call, cap) as never,
      cap
    )
    if (!isPromise(value)) return finish(call, toJson(value))
  } catch (e) {
    return finish(call, '1' + describe(e))
  }
  return Promise.resolve(value).then(
    (v) => finish(call, toJson(v)),
    (e: unknown) => finish(call, '1' + describe(e))
  )
}

function finish(call: Call, out: string): string {
  call.done = true
  // a call that posted nothing left no capability request waiting
  if (call.sent > 0) for (const [capId, w] of waiting) if (w.id === call.id) waiting.delete(capId)
  return `${out[0]}${call.sent}:${out.slice(1)}`
}
