import type { Database } from 'lmdb'
import type { Logger } from '../observability/index.js'
import type { Capabilities, EffectiveGrant } from './contract.js'
import { urlAllowed } from './net-allow.js'
import type { AgentTurns } from './agent-turns.js'
import type { RuntimeStreams } from './runtime-streams.js'
import { readCapped, HTTP_ERRORS } from '../http/index.js'
import { isPlatformError } from '../contracts/index.js'

/** Largest response body `ctx.fetch` hands a plugin. */
export const FETCH_MAX_BYTES = 1_048_576
/** Largest value (as JSON) and longest key a plugin may store. */
export const KV_MAX_VALUE_BYTES = 1_048_576
export const KV_MAX_KEY_CHARS = 512
const KV_LIST_MAX = 10_000
const MAX_REDIRECTS = 5

export type KvDatabase = Database<unknown, [string, string]>

/**
 * Where plugins' values are kept, each under its plugin's name: this node's LMDB, or PostgreSQL
 * (`platform.plugin-kv.store`), where a value put on one node is read on every node. Keys and
 * values reach it checked (see `kvCapability`).
 */
export interface PluginKvStore {
  get(plugin: string, key: string): Promise<unknown>
  put(plugin: string, key: string, value: unknown): Promise<void>
  delete(plugin: string, key: string): Promise<boolean>
  /** The plugin's keys starting with `prefix`, in key order, at most `limit`. */
  list(plugin: string, prefix: string, limit: number): Promise<string[]>
}

/** Plugins' values in this node's `plugin-kv` database, opened on first use. */
export function lmdbPluginKv(kvDb: () => KvDatabase): PluginKvStore {
  return {
    async get(plugin, key) {
      return kvDb().get([plugin, key])
    },
    async put(plugin, key, value) {
      await kvDb().put([plugin, key], value)
    },
    async delete(plugin, key) {
      const db = kvDb()
      if (!db.doesExist([plugin, key])) return false
      await db.remove([plugin, key])
      return true
    },
    async list(plugin, prefix, limit) {
      const out: string[] = []
      for (const k of kvDb().getKeys({ start: [plugin, prefix], end: [plugin, prefix + '\u{10FFFF}'], limit })) {
        const key = k[1]
        if (k[0] === plugin && typeof key === 'string' && key.startsWith(prefix)) out.push(key)
      }
      return out
    }
  }
}

/** Plugins' values in this process only (`platform.plugin-kv.store: memory`), lost on restart. */
export function memoryPluginKv(): PluginKvStore {
  // one map per plugin, its keys kept sorted on list
  const plugins = new Map<string, Map<string, unknown>>()
  return {
    async get(plugin, key) {
      // a copy, as the other stores decode one: a plugin changing what it read changes nothing kept
      return structuredClone(plugins.get(plugin)?.get(key))
    },
    async put(plugin, key, value) {
      let values = plugins.get(plugin)
      if (values === undefined) plugins.set(plugin, (values = new Map()))
      values.set(key, value)
    },
    async delete(plugin, key) {
      return plugins.get(plugin)?.delete(key) ?? false
    },
    async list(plugin, prefix, limit) {
      const keys = [...(plugins.get(plugin)?.keys() ?? [])].filter((k) => k.startsWith(prefix))
      // by their UTF-8 bytes, as LMDB and PostgreSQL ("C") order keys
      keys.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      return keys.slice(0, limit)
    }
  }
}

export interface CapabilityDeps {
  logger: Logger
  /** Where `ctx.kv` keeps plugins' values. */
  kv: PluginKvStore
  /** Where `env` reads from (default `process.env`). */
  env?: Record<string, string | undefined>
  /** The open agent turns that answer `ctx.model` and `ctx.callTool` of an agent's own run. */
  agentTurns?: AgentTurns
  /** The open runtime streams whose sandboxes ask for more events (`runtime.pull`). */
  runtimeStreams?: RuntimeStreams
}

/** Capabilities for one plugin, exactly as granted: log always, the rest only when granted. */
export function buildCapabilities(deps: CapabilityDeps, name: string, grant: EffectiveGrant): Capabilities {
  const caps: Capabilities = { log: deps.logger.child({ plugin: name }) }
  // not a grant: without an open turn of this plugin every such call is refused
  const turns = deps.agentTurns
  if (turns !== undefined) caps.agent = (op, args) => turns.call(name, op, args)
  const streams = deps.runtimeStreams
  if (streams !== undefined) caps.runtime = (op, args) => streams.call(name, op, args)
  if (grant.permissions.kv) caps.kv = kvCapability(deps.kv, name)
  if (grant.permissions.net.length > 0)
    caps.fetch = fetchCapability(name, grant.permissions.net, grant.limits.timeoutMs)
  if (grant.permissions.env.length > 0) {
    const src = deps.env ?? process.env
    const env: Record<string, string> = {}
    for (const v of grant.permissions.env) if (src[v] !== undefined) env[v] = src[v]!
    caps.env = Object.freeze(env)
  }
  return caps
}

// U+0000 and a lone surrogate: PostgreSQL text holds neither, and one key must mean the same everywhere
const UNSTORABLE = /\0|\p{Cs}/u

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > KV_MAX_KEY_CHARS)
    throw new TypeError(`kv: a key must be a string of 1-${KV_MAX_KEY_CHARS} characters`)
  if (UNSTORABLE.test(key)) throw new TypeError('kv: a key must not hold U+0000 or a lone surrogate')
  return key
}

/** Keys are kept under the plugin's name: a plugin can only ever name keys under its own name. */
export function kvCapability(store: PluginKvStore, plugin: string): NonNullable<Capabilities['kv']> {
  return {
    async get(key) {
      return store.get(plugin, checkKey(key))
    },
    async put(key, value) {
      const k = checkKey(key)
      const json = JSON.stringify(value)
      if (json === undefined) throw new TypeError('kv: the value must be JSON (not undefined or a function)')
      if (Buffer.byteLength(json) > KV_MAX_VALUE_BYTES)
        throw new RangeError(`kv: the value is larger than ${KV_MAX_VALUE_BYTES} bytes as JSON`)
      await store.put(plugin, k, JSON.parse(json))
    },
    async delete(key) {
      return store.delete(plugin, checkKey(key))
    },
    async list(prefix = '') {
      if (typeof prefix !== 'string') throw new TypeError('kv: the prefix must be a string')
      if (UNSTORABLE.test(prefix)) throw new TypeError('kv: a prefix must not hold U+0000 or a lone surrogate')
      return store.list(plugin, prefix, KV_LIST_MAX)
    }
  }
}

function refusal(plugin: string, url: URL, net: readonly string[]): Error {
  return new Error(
    `fetch: host '${url.host}' is not granted to plugin '${plugin}' (allowed: ${net.join(', ')}); declare it in plugin.json permissions.net and grant it in platform.yaml: platform.plugins.${plugin}.permissions.net: ${JSON.stringify([...net, url.host])}`
  )
}

/** `fetch` done by the host: allow-listed hosts only (redirects re-checked), a timeout and a response size limit. */
export function fetchCapability(
  plugin: string,
  net: readonly string[],
  timeoutMs: number,
  maxBytes = FETCH_MAX_BYTES
): NonNullable<Capabilities['fetch']> {
  return async (url, init = {}) => {
    let u: URL
    try {
      u = new URL(String(url))
    } catch {
      throw new TypeError(`fetch: invalid URL '${String(url)}'`)
    }
    let method = (init.method ?? 'GET').toUpperCase()
    let body = init.body
    const headers = init.headers ?? {}
    const signal = AbortSignal.timeout(timeoutMs)
    for (let hop = 0; ; hop++) {
      if (u.protocol !== 'http:' && u.protocol !== 'https:')
        throw new TypeError(`fetch: only http and https URLs are allowed, got '${u.protocol}'`)
      if (!urlAllowed(net, u)) throw refusal(plugin, u, net)
      let res: Response
      try {
        res = await fetch(u, { method, headers, ...(body !== undefined ? { body } : {}), redirect: 'manual', signal })
      } catch (e) {
        const err = e as Error
        if (err.name === 'TimeoutError' || signal.aborted)
          throw new Error(`fetch: ${u.origin} did not answer within ${timeoutMs} ms`, { cause: e })
        throw new Error(
          `fetch: request to ${u.origin} failed: ${(err.cause as Error | undefined)?.message ?? err.message}`,
          { cause: e }
        )
      }
      const location = res.headers.get('location')
      if (res.status >= 301 && res.status <= 308 && res.status !== 304 && location !== null) {
        await res.body?.cancel()
        if (hop >= MAX_REDIRECTS) throw new Error(`fetch: more than ${MAX_REDIRECTS} redirects from ${u.origin}`)
        u = new URL(location, u)
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET'
          body = undefined
        }
        continue
      }
      const text = await readLimited(res, maxBytes, u)
      const out: Record<string, string> = {}
      res.headers.forEach((v, k) => {
        out[k] = v
      })
      return { status: res.status, headers: out, text }
    }
  }
}

async function readLimited(res: Response, maxBytes: number, u: URL): Promise<string> {
  try {
    return await readCapped(res, maxBytes)
  } catch (e) {
    if (isPlatformError(e, HTTP_ERRORS.RESPONSE_TOO_LARGE))
      throw new Error(`fetch: the response from ${u.origin} is larger than ${maxBytes} bytes`, { cause: e })
    throw e
  }
}
