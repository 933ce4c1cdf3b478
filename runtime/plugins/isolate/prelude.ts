/**
 * Source of the classic script that runs first in every plugin isolate. It takes the host's
 * copying callbacks from a temporary global (then deletes it, so plugin code never sees them),
 * builds the SDK-style `ctx` per call, and returns the entry points the host calls by Reference.
 * Everything crossing the boundary is a string or number: results leave as JSON text.
 *
 * Status codes passed to `done`, or leading the string `call` returns when it settled at once: 0
 * result (JSON), 1 threw (message), 2 invalid result (message).
 */
/**
 * How many contributions a call may name by number: the host and the isolate number the first ones
 * called in the same order, so a call copies one number into the isolate instead of two strings.
 */
export const CALL_KEYS_MAX = 1024

export const PRELUDE = String.raw`(function () {
  'use strict'
  const host = globalThis.__platformHost
  delete globalThis.__platformHost
  const { done, progress, cap, log, timer, maxResult, capsJson, ids } = host
  // written by the host right before each call: [call id, contribution number] (numbers in shared
  // memory instead of two more arguments to copy per call)
  const callIds = new Float64Array(ids)
  const grants = JSON.parse(capsJson)
  const stringify = JSON.stringify
  const parse = JSON.parse
  // Calls in flight (id -> signal): one in two variables, the others in a Map. A long-lived Map
  // that gains and loses an entry per call would allocate a new hash table on nearly every call,
  // in this isolate's old generation.
  let soloId, soloSignal
  const others = new Map()
  const calls = {
    get size () { return (soloId === undefined ? 0 : 1) + others.size },
    has (id) { return id === soloId || (others.size !== 0 && others.has(id)) },
    get (id) { return id === soloId ? soloSignal : others.size === 0 ? undefined : others.get(id) },
    set (id, signal) { if (soloId === undefined || soloId === id) { soloId = id; soloSignal = signal } else others.set(id, signal) },
    delete (id) {
      if (id === soloId) { soloId = undefined; soloSignal = undefined; return true }
      return others.size !== 0 && others.delete(id)
    }
  }
  const pendingCaps = new Map()
  const timers = new Map()
  let nextCap = 1
  let nextTimer = 1
  let plugin, startContribution
  // contributions by number, in the order the host first named them (it keeps the same list)
  const keys = []

  function describe (e) {
    try {
      if (e instanceof Error) {
        // isolated-vm rejects import() with a bare 'Not supported'
        if (e.message === 'Not supported' && e.name === 'Error') return 'dynamic import() is not available in the isolate sandbox (Not supported)'
        return (e.name && e.name !== 'Error' ? e.name + ': ' : '') + String(e.message)
      }
      if (typeof e === 'string') return e
      if (e === undefined) return 'plugin threw undefined'
      const s = stringify(e)
      return 'plugin threw a non-Error value: ' + (s === undefined ? String(e) : s).slice(0, 1000)
    } catch (_) { return 'plugin threw a value that cannot be described' }
  }

  class PluginAbortSignal {
    constructor () { this.aborted = false; this.reason = undefined; this.onabort = null; this._listeners = [] }
    addEventListener (type, fn) { if (type === 'abort' && typeof fn === 'function') this._listeners.push(fn) }
    removeEventListener (type, fn) { this._listeners = this._listeners.filter((l) => l !== fn) }
    throwIfAborted () { if (this.aborted) throw this.reason }
    _abort (message) {
      if (this.aborted) return
      this.aborted = true
      this.reason = new Error(message)
      this.reason.name = 'AbortError'
      const ev = { type: 'abort', target: this }
      for (const fn of [this.onabort, ...this._listeners]) { if (typeof fn === 'function') { try { fn.call(this, ev) } catch (_) {} } }
    }
  }

  function capCall (callId, op, args) {
    if (!calls.has(callId)) return Promise.reject(new Error('the call has ended'))
    const id = nextCap++
    const p = new Promise((resolve, reject) => pendingCaps.set(id, { resolve, reject, callId }))
    cap(id, callId, op, stringify(args))
    return p
  }

  const logger = (level) => (msg, data) => { try { log(level, String(msg).slice(0, 8192), data === undefined ? '{}' : stringify(data)) } catch (_) {} }
  const pluginLog = Object.freeze({ debug: logger('debug'), info: logger('info'), warn: logger('warn'), error: logger('error') })

  const envFrozen = grants.env ? Object.freeze({ ...grants.env }) : undefined

  // Own properties, like the other tiers' ctx, so destructuring ({ kv, progress }) works.
  function makeCtx (callId, signal) {
    const ctx = {
      log: pluginLog,
      signal,
      progress (partial) { if (calls.has(callId)) { const s = stringify(partial === undefined ? null : partial); if (s.length <= maxResult) progress(callId, s) } }
    }
    if (grants.kv) {
      ctx.kv = Object.freeze({
        get: (key) => capCall(callId, 'kv.get', [String(key)]),
        put: (key, value) => capCall(callId, 'kv.put', [String(key), value]),
        delete: (key) => capCall(callId, 'kv.delete', [String(key)]),
        list: (prefix) => capCall(callId, 'kv.list', [prefix === undefined ? '' : String(prefix)])
      })
    }
    if (grants.fetch) {
      ctx.fetch = async (url, init) => {
        const r = await capCall(callId, 'fetch', [String(url), init === undefined ? {} : init])
        return { ...r, json: () => parse(r.text) }
      }
    }
    if (envFrozen) ctx.env = envFrozen
    return Object.freeze(ctx)
  }

  // A call's outcome as one string: the status digit, then the payload; '' when the call had already
  // ended (aborted). A synchronous result is returned from call() itself: no callback into the host.
  function finish (callId, value) {
    if (!calls.delete(callId)) return ''
    if (calls.size === 0 && timers.size !== 0) timers.clear()
    if (typeof value === 'string') {
      if (value.length > maxResult) return '2result too large: ' + (value.length / 1048576).toFixed(1) + ' MB, the limit is ' + (maxResult / 1048576).toFixed(1) + ' MB'
      // a string answers as itself after the text mark (TEXT_MARK): no JSON here nor in the host
      return '0\u0001' + value
    }
    let s
    try { s = stringify(value === undefined ? null : value) } catch (e) { return '2result is not a JSON value: ' + describe(e) }
    if (typeof s !== 'string') s = 'null'
    if (s.length > maxResult) return '2result too large: ' + (s.length / 1048576).toFixed(1) + ' MB of JSON, the limit is ' + (maxResult / 1048576).toFixed(1) + ' MB'
    return '0' + s
  }
  function fail (callId, err) {
    if (!calls.delete(callId)) return ''
    if (calls.size === 0 && timers.size !== 0) timers.clear()
    return '1' + describe(err)
  }
  function report (callId, outcome) { if (outcome !== '') done(callId, outcome.charCodeAt(0) - 48, outcome.slice(1)) }

  globalThis.setTimeout = function setTimeout (fn, ms, ...args) {
    if (typeof fn !== 'function') throw new TypeError('setTimeout needs a function')
    const id = nextTimer++
    timers.set(id, () => fn(...args))
    timer(id, Math.max(0, Number(ms) || 0))
    return id
  }
  globalThis.clearTimeout = function clearTimeout (id) { timers.delete(id) }
  globalThis.queueMicrotask = function queueMicrotask (fn) { Promise.resolve().then(fn) }
  globalThis.console = Object.freeze({ log: pluginLog.info, info: pluginLog.info, debug: pluginLog.debug, warn: pluginLog.warn, error: pluginLog.error })

  return {
    install (dispatch, entry) {
      startContribution = dispatch.startContribution
      plugin = entry.default
      return stringify(dispatch.describePlugin(plugin))
    },
    call (argsJson, key) {
      const callId = callIds[0]
      let kind, name
      if (key === undefined) { const k = keys[callIds[1]]; kind = k.kind; name = k.name } else {
        const cut = key.indexOf('\0')
        kind = key.slice(0, cut)
        name = key.slice(cut + 1)
        if (keys.length < ${CALL_KEYS_MAX}) keys.push({ kind, name })
      }
      const signal = new PluginAbortSignal()
      calls.set(callId, signal)
      let value
      let thenable
      try {
        value = startContribution(plugin, { kind, name, args: argsJson === '' ? undefined : parse(argsJson) }, makeCtx(callId, signal), (op, args) => capCall(callId, op, args))
        thenable = value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function'
      } catch (e) { return fail(callId, e) }
      if (!thenable) return finish(callId, value)
      Promise.resolve(value).then((v) => { report(callId, finish(callId, v)) }, (e) => { report(callId, fail(callId, e)) })
      return ''
    },
    capDone (capId, ok, json) {
      const c = pendingCaps.get(capId)
      if (c === undefined) return
      pendingCaps.delete(capId)
      if (ok) c.resolve(json === '' ? undefined : parse(json)); else c.reject(new Error(json))
    },
    abort (callId, message) {
      const signal = calls.get(callId)
      if (signal === undefined) return
      calls.delete(callId)
      if (calls.size === 0 && timers.size !== 0) timers.clear()
      for (const [id, c] of pendingCaps) if (c.callId === callId) { pendingCaps.delete(id); c.reject(new Error(message)) }
      signal._abort(message)
    },
    fire (timerId) {
      const fn = timers.get(timerId)
      if (fn === undefined) return
      timers.delete(timerId)
      fn()
    }
  }
})()`
