import { createHash } from 'node:crypto'
import { createClient } from 'redis'
import type {
  BudgetTake,
  SharedCounters,
  SlidingWindow,
  SlotPool,
  SlotTake,
  TokenBudget,
  WindowHit
} from '../contracts/index.js'
import type { Logger } from '../observability/index.js'

export interface RedisCountersOptions {
  url: string
  node: string
  logger: Logger
  /** Key prefix, so several platforms may share one Redis (default `platform:counters:`). */
  prefix?: string
  /** How long a slot outlives the last renewal by its node (default 30 000 ms; renewed every third of it). */
  slotTtlMs?: number
  /** Longest wait for an answer before the count counts as unreachable (default 1000 ms). */
  timeoutMs?: number
  /** Most milliseconds between two reconnect attempts (default 2000). */
  maxRetryMs?: number
}

/** A Lua script, run by its sha and sent whole only when Redis does not know it yet. */
interface Script {
  text: string
  sha: string
}
const script = (text: string): Script => ({ text, sha: createHash('sha1').update(text).digest('hex') })

// Redis's own clock for every node: limits hold whatever the skew between the nodes' clocks
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

/** Sliding window: KEYS[1] a sorted set of event ids scored by time; ARGV limit, window ms, peek, id. */
const HIT = script(`${NOW}
local key, limit, window = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local n = redis.call('ZCARD', key)
if n >= limit then return {0, n} end
if ARGV[3] == '1' then return {1, n} end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
return {1, n + 1}`)

/** Slots: KEYS[1] a sorted set of slot ids scored by expiry; ARGV max, ttl ms, peek, id. */
const ACQUIRE = script(`${NOW}
local key, max, ttl = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
local n = redis.call('ZCARD', key)
if n >= max then return {0, n} end
if ARGV[3] == '1' then return {1, n} end
redis.call('ZADD', key, now + ttl, ARGV[4])
redis.call('PEXPIRE', key, ttl)
return {1, n + 1}`)

/** Pushes the expiry of the slots ARGV[2..] under KEYS[1] to ttl (ARGV[1]) from now; an expired one stays gone. */
const RENEW = script(`${NOW}
local ttl = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ttl)
return 0`)

/**
 * Token budget: KEYS[1] a hash of the units left (`t`) and when (`at`); ARGV capacity, refill ms,
 * cost. A key never seen starts full; it expires once it would be full again.
 */
const TAKE = script(`${NOW}
local key, cap, refill = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local cost = math.min(tonumber(ARGV[3]), cap)
local v = redis.call('HMGET', key, 't', 'at')
local tokens, at = tonumber(v[1]) or cap, tonumber(v[2]) or now
tokens = math.min(cap, tokens + (now - at) * cap / refill)
if tokens < cost then return {0, math.ceil((cost - tokens) * refill / cap)} end
tokens = tokens - cost
redis.call('HSET', key, 't', tostring(tokens), 'at', now)
redis.call('PEXPIRE', key, math.ceil((cap - tokens) * refill / cap) + 1)
return {1, 0}`)

/**
 * Counts on Redis, shared by every node: each limit is one sorted set per key, read and changed
 * by one Lua script (atomic: two nodes never both take the last slot). A slot is held with an
 * expiry its node renews while it holds it, so the slots of a node that dies free themselves.
 * Redis out of reach (or slower than `timeoutMs`): the answer rejects at once, and the limits
 * built on these counts refuse (fail closed); a slot that cannot be given back expires.
 */
export class RedisCounters implements SharedCounters {
  readonly kind = 'redis'
  private readonly client: ReturnType<typeof createClient>
  private readonly prefix: string
  private readonly ttl: number
  private readonly timeoutMs: number
  /** Per Redis key, the ids of the slots this node holds there (renewed until released). */
  private readonly held = new Map<string, string[]>()
  private seq = 0
  private renewer: NodeJS.Timeout | undefined
  private closed = false

  constructor(private readonly opts: RedisCountersOptions) {
    this.prefix = opts.prefix ?? 'platform:counters:'
    this.ttl = opts.slotTtlMs ?? 30_000
    this.timeoutMs = opts.timeoutMs ?? 1000
    const maxRetry = opts.maxRetryMs ?? 2000
    this.client = createClient({
      url: opts.url,
      // a count while Redis is down fails at once (and the limit refuses) instead of queueing
      disableOfflineQueue: true,
      socket: { reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, maxRetry), connectTimeout: 2000 }
    })
    let warned = false
    this.client.on('error', (err: Error) => {
      if (warned) return
      warned = true
      opts.logger.warn({ err: err.message }, 'cluster: Redis cannot be reached; rate and concurrency limits refuse')
    })
    this.client.on('ready', () => {
      if (warned) opts.logger.info('cluster: Redis is back; rate and concurrency limits count again')
      warned = false
    })
  }

  /** Connects; a Redis down at start-up is not fatal, the client keeps trying. */
  start(): void {
    void this.client.connect().catch(() => {})
    this.renewer = setInterval(() => this.renew(), Math.max(10, Math.floor(this.ttl / 3)))
    this.renewer.unref()
  }

  available(): boolean {
    return !this.closed && this.client.isReady
  }

  window(name: string, limit: number, windowMs: number): SlidingWindow {
    const base = this.keyBase('w', name)
    return {
      hit: async (key, peek = false): Promise<WindowHit> => {
        const [ok, n] = await this.run(HIT, base + key, [limit, windowMs, peek ? 1 : 0, this.id()])
        return { admitted: ok === 1, count: n }
      }
    }
  }

  slots(name: string, max: number): SlotPool {
    const base = this.keyBase('s', name)
    return {
      acquire: async (key, peek = false): Promise<SlotTake> => {
        const id = this.id()
        const k = base + key
        const [ok, n] = await this.run(ACQUIRE, k, [max, this.ttl, peek ? 1 : 0, id])
        if (ok === 1 && !peek) {
          const ids = this.held.get(k)
          if (ids === undefined) this.held.set(k, [id])
          else ids.push(id)
        }
        return { acquired: ok === 1, held: n }
      },
      release: (key) => {
        const k = base + key
        const ids = this.held.get(k)
        const id = ids?.pop()
        if (id === undefined) return
        if (ids!.length === 0) this.held.delete(k)
        // not given back (Redis out of reach): no longer renewed, so it expires within the ttl
        if (this.client.isReady) this.client.zRem(k, id).catch(() => {})
      },
      heldHere: (key) => this.held.get(base + key)?.length ?? 0
    }
  }

  budget(name: string, capacity: number, refillMs: number): TokenBudget {
    const base = this.keyBase('b', name)
    return {
      take: async (key, cost): Promise<BudgetTake> => {
        const [ok, wait] = await this.run(TAKE, base + key, [capacity, refillMs, cost])
        return { taken: ok === 1, waitMs: wait }
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (this.renewer !== undefined) clearInterval(this.renewer)
    // the slots still held go back at once rather than after their expiry
    if (this.client.isReady) {
      await Promise.all([...this.held].map(([k, ids]) => this.client.zRem(k, ids).catch(() => 0)))
      await this.client.close().catch(() => this.client.destroy())
    } else if (this.client.isOpen) this.client.destroy()
    this.held.clear()
  }

  /** The name's length first, so that no name and key pair spells another's. */
  private keyBase(kind: string, name: string): string {
    return `${this.prefix}${kind}:${name.length}:${name}:`
  }

  /** Unique across the cluster: the node id is. */
  private id(): string {
    return `${this.opts.node}:${(this.seq++).toString(36)}`
  }

  private renew(): void {
    if (!this.client.isReady) return
    for (const [k, ids] of this.held)
      this.exec(RENEW, k, [this.ttl, ...ids]).catch(() => {
        /* the next round tries again; a slot missing it by a whole ttl expires */
      })
  }

  private async run(s: Script, key: string, args: (string | number)[]): Promise<[number, number]> {
    if (!this.client.isReady) throw new Error('Redis cannot be reached')
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${this.timeoutMs} ms`)), this.timeoutMs)
    })
    try {
      const reply = (await Promise.race([this.exec(s, key, args), timeout])) as unknown
      if (!Array.isArray(reply) || typeof reply[0] !== 'number' || typeof reply[1] !== 'number')
        throw new Error('Redis answered a count script with something else')
      return [reply[0], reply[1]]
    } finally {
      clearTimeout(timer)
    }
  }

  private async exec(s: Script, key: string, args: (string | number)[]): Promise<unknown> {
    const options = { keys: [key], arguments: args.map(String) }
    try {
      return await this.client.evalSha(s.sha, options)
    } catch (err) {
      // a Redis restarted (or flushed) forgot the script: send it whole once
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err
      return this.client.eval(s.text, options)
    }
  }
}
