/**
 * A readiness check: `/readyz` answers 503 while any returns false (a load balancer takes the node
 * out); `'degraded'` answers 200 with status DEGRADED: the node still serves, without something it
 * can do without for a while (an external MCP server, or Redis, which every node would lose at once).
 */
export type ReadinessCheck = () => boolean | 'degraded'

/** Each check's state and the node's: DOWN when closing or any check is down, DEGRADED when any is degraded. */
export function readinessOf(
  checks: ReadonlyMap<string, ReadinessCheck>,
  closing: boolean
): { status: 'UP' | 'DEGRADED' | 'DOWN'; checks: Record<string, string> } {
  const states: Record<string, string> = {}
  let ready = !closing
  let degraded = false
  for (const [name, check] of checks) {
    let ok: boolean | 'degraded'
    try {
      ok = check()
    } catch {
      ok = false
    }
    states[name] = ok === 'degraded' ? 'DEGRADED' : ok ? 'UP' : 'DOWN'
    if (ok === 'degraded') degraded = true
    else if (!ok) ready = false
  }
  return { status: !ready ? 'DOWN' : degraded ? 'DEGRADED' : 'UP', checks: states }
}
