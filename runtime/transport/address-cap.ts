import { addressBucket, peerAddress } from '../http/index.js'
import { PlatformError } from '../contracts/index.js'
import { TRANSPORT_ERRORS } from './errors.js'

/** The most connections of one kind one client address may hold on an endpoint, and the key that sets it. */
export interface AddressLimit {
  max: number
  /** The configuration key, named in the 429 so an operator knows what to raise. */
  key: string
  /** What the connections are, for the message (`room members`, `agent connections`). */
  what: string
}

/** A socket whose peer address is the client's (an upgrade's response, or the WebSocket once open). */
export interface PeerSocket {
  getRemoteAddressAsText(): ArrayBuffer
}

/** One held connection's place in its address's count; `release` gives it back (idempotent). */
export interface AddressSlot {
  release(): void
  /**
   * Where a slot taken without its address reads it from now on (the open socket, once the
   * upgrade's response is gone); ignored once the address is known.
   */
  readFrom(peer: PeerSocket): void
}

/** Live connections of one kind: how many, and those whose address has not been read yet. */
interface KindLive {
  count: number
  unread: Set<Slot>
}

class Slot implements AddressSlot {
  /** The `kind bucket` key counted, once the address is known. */
  key: string | undefined
  private held = true

  constructor(
    private readonly cap: AddressCap,
    readonly live: KindLive,
    public peer: PeerSocket | undefined
  ) {}

  release(): void {
    if (!this.held) return
    this.held = false
    this.cap.forget(this)
  }

  readFrom(peer: PeerSocket): void {
    if (this.key === undefined && this.held) this.peer = peer
  }
}

/**
 * Live connections per client address (IPv6 by /64) and kind. Every address counts, loopback
 * included: a local proxy or a test client is no more trusted than a remote one, and the operator
 * raises the limit where many clients share an address.
 *
 * Reading a socket's peer address is a system call, so `takeDeferred` leaves it unread while
 * fewer than `max` connections of the kind are live: no address can hold `max` then. From the
 * take that finds `max` live, the count is exact again: the unread ones are read first, and each
 * new one is read, until the live count drops below `max`.
 */
export class AddressCap {
  private readonly counts = new Map<string, number>()
  private readonly kinds = new Map<string, KindLive>()

  constructor(readonly limit: AddressLimit) {}

  /** Takes a slot for a `kind` connection from `address`, or throws 429 when it holds the limit already. */
  take(address: string, kind: string): AddressSlot {
    const live = this.liveOf(kind)
    if (live.count >= this.limit.max) this.readAll(kind, live)
    const bucket = addressBucket(address)
    const key = kind + ' ' + bucket
    const n = this.counts.get(key) ?? 0
    if (n >= this.limit.max)
      throw new PlatformError(TRANSPORT_ERRORS.TOO_MANY_CONNECTIONS, {
        what: this.limit.what,
        kind,
        address: bucket,
        max: this.limit.max,
        key: this.limit.key
      })
    this.counts.set(key, n + 1)
    live.count++
    const slot = new Slot(this, live, undefined)
    slot.key = key
    return slot
  }

  /**
   * As `take`, for a connection whose address is `peer`'s; it is read now only when `max`
   * connections of the kind are live, else when one later take finds them so (or never).
   * `peer` must stay readable until the slot is released or handed another (`readFrom`).
   */
  takeDeferred(peer: PeerSocket, kind: string): AddressSlot {
    const live = this.liveOf(kind)
    if (live.count >= this.limit.max) return this.take(peerAddress(peer), kind)
    live.count++
    const slot = new Slot(this, live, peer)
    live.unread.add(slot)
    return slot
  }

  /** Connections `address` holds of `kind` (tests and the admin read it); reads the unread ones' addresses. */
  held(address: string, kind: string): number {
    const live = this.kinds.get(kind)
    if (live !== undefined) this.readAll(kind, live)
    return this.counts.get(kind + ' ' + addressBucket(address)) ?? 0
  }

  /** Gives a released slot's place back. */
  forget(slot: Slot): void {
    slot.live.count--
    const key = slot.key
    if (key === undefined) {
      slot.live.unread.delete(slot)
      slot.peer = undefined
      return
    }
    const left = (this.counts.get(key) ?? 1) - 1
    if (left <= 0) this.counts.delete(key)
    else this.counts.set(key, left)
  }

  private liveOf(kind: string): KindLive {
    let live = this.kinds.get(kind)
    if (live === undefined) {
      live = { count: 0, unread: new Set() }
      this.kinds.set(kind, live)
    }
    return live
  }

  /** Counts every unread live connection of `kind` under its address. */
  private readAll(kind: string, live: KindLive): void {
    for (const slot of live.unread) {
      live.unread.delete(slot)
      const key = kind + ' ' + addressBucket(readOrUnknown(slot.peer!))
      slot.key = key
      slot.peer = undefined
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
    }
  }
}

/**
 * A socket that cannot be read is gone without releasing its slot: it still counts (the live
 * total must match the per-address counts), under no client's address.
 */
function readOrUnknown(peer: PeerSocket): string {
  try {
    return peerAddress(peer)
  } catch {
    return 'unknown'
  }
}
