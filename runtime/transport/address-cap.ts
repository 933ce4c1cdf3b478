import { addressBucket } from '../http/index.js'
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

/** One held connection's place in its address's count; `release` gives it back (idempotent). */
export interface AddressSlot {
  release(): void
}

/**
 * Live connections per client address (IPv6 by /64) and kind. Every address counts, loopback
 * included: a local proxy or a test client is no more trusted than a remote one, and the operator
 * raises the limit where many clients share an address.
 */
export class AddressCap {
  private readonly counts = new Map<string, number>()

  constructor(readonly limit: AddressLimit) {}

  /** Takes a slot for a `kind` connection from `address`, or throws 429 when it holds the limit already. */
  take(address: string, kind: string): AddressSlot {
    const bucket = addressBucket(address)
    const k = kind + ' ' + bucket
    const n = this.counts.get(k) ?? 0
    if (n >= this.limit.max)
      throw new PlatformError(TRANSPORT_ERRORS.TOO_MANY_CONNECTIONS, {
        what: this.limit.what,
        kind,
        address: bucket,
        max: this.limit.max,
        key: this.limit.key
      })
    this.counts.set(k, n + 1)
    let held = true
    return {
      release: () => {
        if (!held) return
        held = false
        const left = (this.counts.get(k) ?? 1) - 1
        if (left <= 0) this.counts.delete(k)
        else this.counts.set(k, left)
      }
    }
  }

  /** Connections `address` holds of `kind` (tests and the admin read it). */
  held(address: string, kind: string): number {
    return this.counts.get(kind + ' ' + addressBucket(address)) ?? 0
  }
}
