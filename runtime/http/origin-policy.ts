const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/

/**
 * Which browser origins may open an endpoint a web page can reach (MCP, rooms, agents, AG-UI, A2A,
 * interactions): the rule of `platform.server.allowed-origins`. Browsers send `Origin` on every
 * WebSocket upgrade and cross-site request, so checking it is what stops a foreign page (or a
 * DNS-rebinding one) from driving these endpoints with the visitor's network position.
 *
 * Admitted: no Origin (a non-browser client), a listed origin, `*` (any), a loopback origin, and a
 * same-origin page whose host is an IP address. A same-origin page under a DNS name must be
 * listed: after DNS rebinding, an attacker's page has the server's address under the attacker's
 * name, sends that name as Host, and would look same-origin.
 */
export class OriginPolicy {
  private readonly any: boolean
  private readonly list: Set<string>

  constructor(allowed: readonly string[]) {
    this.any = allowed.includes('*')
    this.list = new Set(allowed.map((o) => o.replace(/\/$/, '').toLowerCase()))
  }

  /** Whether a request with this `Origin` (and `Host`) header may proceed. */
  allowed(origin: string | undefined, host?: string): boolean {
    if (origin === undefined || this.any) return true
    const o = origin.toLowerCase()
    if (this.list.has(o)) return true
    let url: URL
    try {
      url = new URL(o)
    } catch {
      return false
    }
    if (LOOPBACK.has(url.hostname)) return true
    const ipHost = IPV4.test(url.hostname) || url.hostname.startsWith('[')
    return ipHost && host !== undefined && url.host === host.toLowerCase() && url.origin === o
  }
}
