/**
 * The bucket a client address is counted in by per-address limits: IPv4 as is (also when it arrives IPv4-mapped on
 * a dual-stack socket), IPv6 by its /64, since one host usually holds a whole /64 and could
 * otherwise step around the limit by changing addresses.
 */
export function addressBucket(address: string): string {
  if (!address.includes(':')) return address
  const groups = expandIpv6(address)
  if (groups === undefined) return address
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff)
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`
}

function expandIpv6(a: string): number[] | undefined {
  const [head, tail, extra] = a.split('::')
  if (extra !== undefined) return undefined
  const part = (s: string | undefined): number[] =>
    s === undefined || s === '' ? [] : s.split(':').map((g) => parseInt(g, 16))
  const h = part(head)
  const t = part(tail)
  const groups = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t]
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined
}
