import { BACKPLANE_TOPIC, type Backplane, type BackplaneListener } from '../contracts/index.js'

/** Checks a topic name; the backplanes share it so both refuse the same names. */
export function checkTopic(topic: unknown): asserts topic is string {
  if (typeof topic !== 'string' || !BACKPLANE_TOPIC.test(topic))
    throw new TypeError(`backplane topic must match ${String(BACKPLANE_TOPIC)}, got ${JSON.stringify(topic)}`)
}

/**
 * The nodes of one process: what an in-process backplane delivers between. A platform alone has a
 * hub of its own (nobody else to reach); tests put several platforms on one hub.
 */
export class InProcessHub {
  /** Per topic, the nodes subscribed to it and each one's delivery. */
  private readonly topics = new Map<string, Map<string, (payload: string, from: string) => void>>()

  /** A backplane for `node` on this hub. */
  node(node: string): Backplane {
    return new InProcessBackplane(this, node)
  }

  /** Subscribers of `topic` on the hub, one per node. */
  subscriptions(topic: string): number {
    return this.topics.get(topic)?.size ?? 0
  }

  /** @internal the backplane's side */
  join(topic: string, node: string, deliver: (payload: string, from: string) => void): void {
    let nodes = this.topics.get(topic)
    if (nodes === undefined) this.topics.set(topic, (nodes = new Map()))
    nodes.set(node, deliver)
  }

  /** @internal */
  leave(topic: string, node: string): void {
    const nodes = this.topics.get(topic)
    nodes?.delete(node)
    if (nodes?.size === 0) this.topics.delete(topic)
  }

  /** @internal */
  send(topic: string, from: string, payload: string): void {
    const nodes = this.topics.get(topic)
    if (nodes === undefined) return
    // later, as a network would: a publisher never runs a subscriber inside its own call
    for (const [node, deliver] of nodes) if (node !== from) queueMicrotask(() => deliver(payload, from))
  }
}

/**
 * The default backplane: delivers between the nodes of one hub in the process. Messages are
 * serialised as on the wire, so a subscriber gets a copy and a value that JSON cannot carry fails
 * at the publisher, as it would on Redis.
 */
class InProcessBackplane implements Backplane {
  readonly kind = 'in-process'
  readonly dropped = 0
  private readonly listeners = new Map<string, Set<BackplaneListener>>()
  private closed = false

  constructor(
    private readonly hub: InProcessHub,
    readonly node: string
  ) {}

  publish(topic: string, data: unknown): void {
    checkTopic(topic)
    if (this.closed) return
    this.hub.send(topic, this.node, JSON.stringify(data))
  }

  subscribe(topic: string, listener: BackplaneListener): () => void {
    checkTopic(topic)
    let set = this.listeners.get(topic)
    if (set === undefined) {
      this.listeners.set(topic, (set = new Set()))
      this.hub.join(topic, this.node, (payload, from) => this.deliver(topic, payload, from))
    }
    const mine = set
    // a wrapper per call: the same function subscribed twice is two subscriptions
    const entry: BackplaneListener = (data, from) => listener(data, from)
    mine.add(entry)
    return () => {
      if (!mine.delete(entry) || mine.size > 0 || this.listeners.get(topic) !== mine) return
      this.listeners.delete(topic)
      this.hub.leave(topic, this.node)
    }
  }

  available(): boolean {
    return !this.closed
  }

  async close(): Promise<void> {
    this.closed = true
    for (const topic of this.listeners.keys()) this.hub.leave(topic, this.node)
    this.listeners.clear()
  }

  private deliver(topic: string, payload: string, from: string): void {
    for (const l of this.listeners.get(topic) ?? []) {
      try {
        l(JSON.parse(payload), from)
      } catch {
        /* one broken subscriber costs the others nothing */
      }
    }
  }
}
