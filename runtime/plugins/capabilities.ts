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

export interface CapabilityDeps {
  logger: Logger
  /** The shared `plugin-kv` database, opened on first use. */
  kvDb: () => KvDatabase
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
  if (grant.permissions.kv) caps.kv = kvCapability(deps.kvDb, name)
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

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > KV_MAX_KEY_CHARS)
    throw new TypeError(`kv: a key must be a string of 1-${KV_MAX_KEY_CHARS} characters`)
  return key
}

/** Keys are stored as [plugin, key]: a plugin can only ever name keys under its own name. */
export function kvCapability(kvDb: () => KvDatabase, plugin: string): NonNullable<Capabilities['kv']> {
  return {
    async get(key) {
      const v = kvDb().get([plugin, checkKey(key)])
      return v === undefined ? undefined : v
    },
    async put(key, value) {
      const k = checkKey(key)
      const json = JSON.stringify(value)
      if (json === undefined) throw new TypeError('kv: the value must be JSON (not undefined or a function)')
      if (Buffer.byteLength(json) > KV_MAX_VALUE_BYTES)
        throw new RangeError(`kv: the value is larger than ${KV_MAX_VALUE_BYTES} bytes as JSON`)
      await kvDb().put([plugin, k], JSON.parse(json))
    },
    async delete(key) {
      const k: [string, string] = [plugin, checkKey(key)]
      const db = kvDb()
      if (!db.doesExist(k)) return false
      await db.remove(k)
      return true
    },
    async list(prefix = '') {
      if (typeof prefix !== 'string') throw new TypeError('kv: the prefix must be a string')
      const out: string[] = []
      for (const k of kvDb().getKeys({
        start: [plugin, prefix],
        end: [plugin, prefix + '\u{10FFFF}'],
        limit: KV_LIST_MAX
      })) {
        const key = k[1]
        if (k[0] === plugin && typeof key === 'string' && key.startsWith(prefix)) out.push(key)
      }
      return out
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
