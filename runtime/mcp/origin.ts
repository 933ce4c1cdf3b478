const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])

/**
 * Origin allow-list (MCP 2025-11-25: servers MUST validate Origin, 403 otherwise; it is what stops
 * DNS rebinding). No Origin header (non-browser clients) passes. Loopback origins always pass;
 * `*` in the list allows any origin.
 */
export class OriginPolicy {
  private readonly any: boolean
  private readonly list: Set<string>

  constructor(allowed: readonly string[]) {
    this.any = allowed.includes('*')
    this.list = new Set(allowed.map((o) => o.replace(/\/$/, '').toLowerCase()))
  }

  allowed(origin: string | undefined): boolean {
    if (origin === undefined || this.any) return true
    const o = origin.toLowerCase()
    if (this.list.has(o)) return true
    try {
      return LOOPBACK.has(new URL(o).hostname)
    } catch {
      return false
    }
  }
}
