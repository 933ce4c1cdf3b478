/**
 * Who a request comes from when the platform sits behind proxies (nginx in front of a cluster):
 * the peer of the socket, unless that peer is a proxy the operator trusts
 * (`platform.server.trusted-proxies`), then the right-most `X-Forwarded-For` entry that is not a
 * trusted proxy itself. Each proxy appends the address it saw, so the entries right of the client
 * were written by proxies we trust, and everything left of it is what the client claimed. Without
 * this every client behind one nginx shares nginx's address, and one of them can fill a
 * per-address cap for all.
 */
import { BlockList, isIP } from 'node:net'
import type { HttpResponse } from 'uWebSockets.js'
import { PlatformError } from '../contracts/index.js'
import { CONFIG_ERRORS } from '../config/index.js'

const KEY = 'platform.server.trusted-proxies'
/** More hops than any real chain of proxies: a longer run of trusted entries is not worth walking. */
const MAX_HOPS = 16
/** Peers remembered as trusted or not: a node sees a handful of proxies, so most checks are one lookup. */
const PEER_MEMORY = 256

/** The socket's peer address as text (an upgrade's response, or the WebSocket once open): one system call. */
export function peerAddress(socket: Pick<HttpResponse, 'getRemoteAddressAsText'>): string {
  // an address is a few ASCII bytes: a char per byte, without a Buffer and a UTF-8 decode
  return String.fromCharCode.apply(null, new Uint8Array(socket.getRemoteAddressAsText()) as unknown as number[])
}

const familyOf = (address: string): 'ipv4' | 'ipv6' => (address.includes(':') ? 'ipv6' : 'ipv4')

export class TrustedProxies {
  private readonly list: BlockList | undefined
  private readonly peers = new Map<string, boolean>()

  /** Addresses and CIDR blocks (IPv4 or IPv6); a malformed entry is CONFIG_INVALID naming the key. */
  constructor(entries: readonly string[]) {
    this.list = entries.length === 0 ? undefined : blockListOf(entries)
  }

  /** The client address of a request from `peer` carrying this `X-Forwarded-For` (all its lines, comma-joined). */
  client(peer: string, forwardedFor: string | undefined): string {
    return this.trusts(peer) ? this.clientBehind(peer, forwardedFor) : peer
  }

  /** Whether any proxy is trusted: then a client's address depends on its request's headers, not only its socket. */
  get configured(): boolean {
    return this.list !== undefined
  }

  /** Whether `peer` is a trusted proxy; always false (and free) when none is configured. */
  trusts(peer: string): boolean {
    const list = this.list
    if (list === undefined) return false
    let yes = this.peers.get(peer)
    if (yes === undefined) {
      // uWS writes IPv6 peers in full (`0000:…:0001`) and IPv4 on a dual-stack socket as mapped
      // IPv6: BlockList reads both, and matches a mapped address against IPv4 blocks
      yes = list.check(peer, familyOf(peer))
      if (this.peers.size >= PEER_MEMORY) this.peers.clear()
      this.peers.set(peer, yes)
    }
    return yes
  }

  /**
   * The client behind a trusted `peer`: walking `X-Forwarded-For` from the right, the first entry
   * that is not a trusted proxy; the left-most when every entry is one. No header, an entry that
   * is not a bare IP address, or more than MAX_HOPS trusted entries: the peer itself, since a
   * header we cannot read says nothing we may believe.
   */
  clientBehind(peer: string, forwardedFor: string | undefined): string {
    if (forwardedFor === undefined) return peer
    const list = this.list!
    let end = forwardedFor.length
    for (let hops = 0; hops < MAX_HOPS; hops++) {
      const comma = end === 0 ? -1 : forwardedFor.lastIndexOf(',', end - 1)
      const hop = forwardedFor.slice(comma + 1, end).trim()
      if (isIP(hop) === 0) return peer
      if (comma < 0 || !list.check(hop, familyOf(hop))) return hop
      end = comma
    }
    return peer
  }
}

function blockListOf(entries: readonly string[]): BlockList {
  const list = new BlockList()
  for (const raw of entries) {
    const entry = raw.trim()
    const slash = entry.indexOf('/')
    const address = slash < 0 ? entry : entry.slice(0, slash)
    const family = isIP(address)
    const bits = family === 6 ? 128 : 32
    const prefixText = slash < 0 ? String(bits) : entry.slice(slash + 1)
    const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN
    // a zone (`fe80::1%eth0`) never appears in a peer address uWS reports: such an entry matches nothing
    if (family === 0 || address.includes('%') || !(prefix <= bits)) throw invalid(raw)
    list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4')
  }
  return list
}

function invalid(entry: string): PlatformError {
  return new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
    detail: `config key '${KEY}' holds ${JSON.stringify(entry)}, which is neither an IP address nor a CIDR block (IPv4 up to /32, IPv6 up to /128)`
  })
}
