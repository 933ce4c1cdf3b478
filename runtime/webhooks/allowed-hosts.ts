/**
 * Where webhooks may go: `platform.webhooks.allowed-hosts`. A URL is checked twice. When a client
 * gives it, its host must be on the list (a name, `*.<domain>`, `*`, an IP address or a CIDR
 * range). When it is delivered, the address the name resolves to must be public, or listed itself:
 * a name that passed the first check and later resolves to a private address (DNS rebinding, or a
 * name the operator allowed for its public address) cannot reach the inside of the network.
 */
import { BlockList, isIP } from 'node:net'
import { PlatformError } from '../contracts/index.js'
import { WEBHOOKS_ERRORS } from './errors.js'

export const MAX_URL_LENGTH = 2048

/** Ranges that are not the public internet: loopback, private, link-local, shared, reserved, multicast. */
const SPECIAL_V4 = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4]
] as const
const SPECIAL_V6 = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8]
] as const

// built once and never changed after
const SPECIAL: Pick<BlockList, 'check'> = ((): BlockList => {
  const ranges = new BlockList()
  for (const [net, prefix] of SPECIAL_V4) ranges.addSubnet(net, prefix, 'ipv4')
  for (const [net, prefix] of SPECIAL_V6) ranges.addSubnet(net, prefix, 'ipv6')
  return ranges
})()

/** An IPv4 address written as IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as the IPv4 address it is. */
export function plainAddress(ip: string): string {
  const m = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(ip)
  if (m === null) return ip
  if (m[1] !== undefined) return m[1]
  const hi = parseInt(m[2]!, 16)
  const lo = parseInt(m[3]!, 16)
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

const family = (ip: string): 'ipv4' | 'ipv6' => (isIP(ip) === 6 ? 'ipv6' : 'ipv4')

/** Whether an address is on the public internet (none of the special ranges). */
export function isPublicAddress(ip: string): boolean {
  const plain = plainAddress(ip)
  return isIP(plain) !== 0 && !SPECIAL.check(plain, family(plain))
}

export class HostAllowList {
  private readonly names = new Set<string>()
  private readonly suffixes: string[] = []
  private anyName = false
  private readonly addresses = new BlockList()

  /** Throws an Error naming the entry when one is neither a name, a pattern, an address nor a range. */
  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const entry = raw
        .trim()
        .toLowerCase()
        .replace(/^\[(.*)\]$/, '$1')
      const cidr = /^(.+)\/(\d{1,3})$/.exec(entry)
      if (cidr !== null && isIP(cidr[1]!) !== 0) {
        const fam = family(cidr[1]!)
        const prefix = Number(cidr[2])
        if (prefix > (fam === 'ipv4' ? 32 : 128)) throw new Error(`'${raw}' has a prefix longer than its address`)
        this.addresses.addSubnet(cidr[1]!, prefix, fam)
      } else if (isIP(entry) !== 0) this.addresses.addAddress(plainAddress(entry), family(plainAddress(entry)))
      else if (entry === '*') this.anyName = true
      else if (/^\*\.[a-z0-9.-]+$/.test(entry)) this.suffixes.push(entry.slice(1))
      else if (/^[a-z0-9.-]+$/.test(entry)) this.names.add(entry.replace(/\.$/, ''))
      else throw new Error(`'${raw}' is not a host name, *.<domain>, *, an IP address or a CIDR range`)
    }
  }

  /** Whether an address is listed (as itself or in a listed range). */
  lists(ip: string): boolean {
    const plain = plainAddress(ip)
    return this.addresses.check(plain, family(plain))
  }

  /** The parsed URL when a client may name it; else WEBHOOK_URL_INVALID or WEBHOOK_HOST_NOT_ALLOWED (400). */
  check(raw: unknown): URL {
    if (typeof raw !== 'string' || raw === '')
      throw new PlatformError(WEBHOOKS_ERRORS.WEBHOOK_URL_INVALID, { detail: 'expected a non-empty string' })
    if (raw.length > MAX_URL_LENGTH)
      throw new PlatformError(WEBHOOKS_ERRORS.WEBHOOK_URL_INVALID, {
        detail: `longer than ${MAX_URL_LENGTH} characters`
      })
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw new PlatformError(WEBHOOKS_ERRORS.WEBHOOK_URL_INVALID, { detail: 'not an absolute URL' })
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new PlatformError(WEBHOOKS_ERRORS.WEBHOOK_URL_INVALID, { detail: `scheme ${url.protocol} (http or https)` })
    if (url.username !== '' || url.password !== '')
      throw new PlatformError(WEBHOOKS_ERRORS.WEBHOOK_URL_INVALID, {
        detail: 'credentials in the URL (give the token in its own field)'
      })
    const host = hostOf(url)
    if (!this.allowsHost(host)) throw new PlatformError(WEBHOOKS_ERRORS.WEBHOOK_HOST_NOT_ALLOWED, { host })
    return url
  }

  /** Whether a URL's host (a name, or an IP address without brackets) is on the list. */
  allowsHost(host: string): boolean {
    if (isIP(host) !== 0) return this.lists(host)
    const name = host.toLowerCase().replace(/\.$/, '')
    if (this.anyName || this.names.has(name)) return true
    return this.suffixes.some((s) => name.endsWith(s) && name.length > s.length)
  }

  /** Whether a delivery may connect to `ip`, the address its host resolved to. */
  allowsAddress(ip: string): boolean {
    return this.lists(ip) || isPublicAddress(ip)
  }
}

/** The URL's host as a name or a bare IP address (the WHATWG parser keeps IPv6 in brackets). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1')
}
