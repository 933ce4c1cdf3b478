import { createHash } from 'node:crypto'
import { BACKPLANE_TOPIC, type Backplane } from '../contracts/index.js'
import type { Broadcaster } from './broadcaster.js'
import { Frame } from './frame.js'

/**
 * A frame a member can make is at most the endpoint's limit in bytes, but JSON written back from
 * what was parsed may be longer than what was read (`1e20` becomes 21 digits): a relayed frame may
 * be this many times its endpoint's limit, plus the envelope of a room message, and no more.
 */
const GROWTH = 5
const ENVELOPE_CHARS = 1024

/** The backplane topic of a broadcaster: its id when it is a valid topic name, else a digest of it. */
export function relayTopic(id: string): string {
  const plain = 'bc:' + id
  return BACKPLANE_TOPIC.test(plain) ? plain : 'bc.h:' + createHash('sha256').update(id).digest('hex').slice(0, 40)
}

/**
 * Carries the broadcasts of clustered broadcasters (rooms) between nodes. A node subscribes to a
 * broadcaster's topic when its first local member joins and drops it when the last one leaves: one
 * backplane subscription per broadcaster with members here, never one per client. A frame from
 * another node is delivered to the local members only, never published again, so it cannot loop;
 * it is refused unless it is as small as a local member could have made it.
 */
export class ClusterRelay {
  readonly #subscriptions = new Map<Broadcaster, () => void>()
  #refused = 0

  constructor(
    /** The backplane to the other nodes, or undefined on a node alone (then nothing is relayed). */
    private readonly backplane: () => Backplane | undefined,
    /** Local delivery of a frame that came from another node. */
    private readonly deliver: (b: Broadcaster, frame: Frame) => void
  ) {}

  /** Frames from other nodes refused as malformed or too large. */
  get refused(): number {
    return this.#refused
  }

  /** Broadcasters this node holds a backplane subscription for. */
  get subscriptions(): number {
    return this.#subscriptions.size
  }

  /** The first local member of `b` joined: hear the other nodes' broadcasts to it. */
  join(b: Broadcaster): void {
    if (!b.clustered || this.#subscriptions.has(b)) return
    const backplane = this.backplane()
    if (backplane === undefined) return
    this.#subscriptions.set(
      b,
      backplane.subscribe(relayTopic(b.id), (data) => this.receive(b, data))
    )
  }

  /** The last local member of `b` left (or it was destroyed): stop hearing its broadcasts. */
  leave(b: Broadcaster): void {
    const off = this.#subscriptions.get(b)
    if (off === undefined) return
    this.#subscriptions.delete(b)
    off()
  }

  /** After local delivery: the same frame to the other nodes' members of `b`. */
  send(b: Broadcaster, frame: Frame): void {
    if (!this.#subscriptions.has(b)) return
    // the frame's text alone: the topic names the broadcaster, and the text is what members get
    this.backplane()?.publish(relayTopic(b.id), frame.text)
  }

  private receive(b: Broadcaster, data: unknown): void {
    // a subscription is dropped after the last member left; a frame already on its way finds no one
    if (b.destroyed || b.resources.size === 0 || !this.#subscriptions.has(b)) return
    if (typeof data !== 'string' || data.length > b.frameLimit * GROWTH + ENVELOPE_CHARS) {
      this.#refused++
      return
    }
    // as text, not trusted as JSON: a long-polling member's answer checks it before embedding it
    this.deliver(b, Frame.text(data))
  }
}
