import { createClient } from 'redis'
import type { Backplane, BackplaneListener } from '../contracts/index.js'
import { checkTopic } from '../events/index.js'
import type { Logger } from '../observability/index.js'

export interface RedisBackplaneOptions {
  url: string
  node: string
  logger: Logger
  /** Channel prefix, so several platforms may share one Redis (default `platform:`). */
  prefix?: string
  /** Most milliseconds between two reconnect attempts (default 2000). */
  maxRetryMs?: number
}

/** What travels on a channel: the sender, so a node drops its own echo, and the data. */
interface Envelope {
  n: string
  d: unknown
}

/**
 * Redis pub/sub between the nodes: one connection publishes, one holds the subscriptions, one
 * Redis subscription per topic whatever the number of local listeners. Redis down: a publish is
 * dropped and counted, never thrown; the client reconnects on its own and resubscribes every
 * topic, so delivery resumes when Redis is back. Pub/sub keeps nothing: what was published while
 * a node could not hear it is gone, and the stores stay the truth for replay.
 */
export class RedisBackplane implements Backplane {
  readonly kind = 'redis'
  readonly node: string
  private readonly pub: ReturnType<typeof createClient>
  private readonly sub: ReturnType<typeof createClient>
  private readonly listeners = new Map<string, Set<BackplaneListener>>()
  /** Per topic, the one listener this node holds on its Redis subscription. */
  private readonly onMessage = new Map<string, (message: string) => void>()
  private readonly prefix: string
  #dropped = 0
  private closed = false

  constructor(private readonly opts: RedisBackplaneOptions) {
    this.node = opts.node
    this.prefix = opts.prefix ?? 'platform:'
    const maxRetry = opts.maxRetryMs ?? 2000
    this.pub = createClient({
      url: opts.url,
      // a publish while Redis is down fails at once (and is dropped) instead of queueing for ever
      disableOfflineQueue: true,
      socket: { reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, maxRetry), connectTimeout: 2000 }
    })
    // subscriptions made while Redis is down wait in the offline queue and go out on connect
    this.sub = createClient({
      url: opts.url,
      socket: { reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, maxRetry), connectTimeout: 2000 }
    })
    let warned = false
    const onError = (err: Error) => {
      // the client retries on its own; one line per outage, not one per attempt
      if (warned) return
      warned = true
      opts.logger.warn({ err: err.message }, 'cluster: Redis cannot be reached; cross-node delivery waits for it')
    }
    this.pub.on('error', onError)
    this.sub.on('error', onError)
    this.sub.on('ready', () => {
      if (warned) opts.logger.info('cluster: Redis is back; cross-node delivery resumes')
      warned = false
    })
  }

  /** Connects both clients; a Redis down at start-up is not fatal, the clients keep trying. */
  start(): void {
    for (const c of [this.pub, this.sub]) void c.connect().catch(() => {})
  }

  get dropped(): number {
    return this.#dropped
  }

  available(): boolean {
    return !this.closed && this.pub.isReady && this.sub.isReady
  }

  publish(topic: string, data: unknown): void {
    checkTopic(topic)
    if (this.closed) return
    const payload = JSON.stringify({ n: this.node, d: data } satisfies Envelope)
    if (!this.pub.isReady) {
      this.#dropped++
      return
    }
    this.pub.publish(this.prefix + topic, payload).catch(() => this.#dropped++)
  }

  subscribe(topic: string, listener: BackplaneListener): () => void {
    checkTopic(topic)
    let set = this.listeners.get(topic)
    let onMessage = this.onMessage.get(topic)
    if (set === undefined || onMessage === undefined) {
      this.listeners.set(topic, (set = new Set()))
      const mine = set
      onMessage = (message: string) => this.deliver(mine, message)
      this.onMessage.set(topic, onMessage)
      this.sub.subscribe(this.prefix + topic, onMessage).catch((err: unknown) => {
        this.opts.logger.warn({ err, topic }, 'cluster: a Redis subscription failed')
      })
    }
    const mine = set
    const redisListener = onMessage
    const entry: BackplaneListener = (data, from) => listener(data, from)
    mine.add(entry)
    return () => {
      if (!mine.delete(entry) || mine.size > 0 || this.listeners.get(topic) !== mine) return
      this.listeners.delete(topic)
      this.onMessage.delete(topic)
      // this topic's Redis listener only: a subscription made again meanwhile keeps its own
      this.sub.unsubscribe(this.prefix + topic, redisListener).catch(() => {})
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.listeners.clear()
    this.onMessage.clear()
    for (const c of [this.pub, this.sub]) {
      // a client still trying to connect has nothing to flush: destroy, do not wait for Redis
      if (c.isReady) await c.close().catch(() => c.destroy())
      else if (c.isOpen) c.destroy()
    }
  }

  private deliver(listeners: Set<BackplaneListener>, message: string): void {
    let env: Envelope
    try {
      env = JSON.parse(message) as Envelope
    } catch {
      return
    }
    if (typeof env?.n !== 'string' || env.n === this.node) return
    for (const l of listeners) {
      try {
        l(env.d, env.n)
      } catch {
        /* one broken subscriber costs the others nothing */
      }
    }
  }
}
