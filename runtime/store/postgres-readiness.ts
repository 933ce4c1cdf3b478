/**
 * A PostgreSQL-backed store's readiness: up, or out of reach. On one node that is DOWN (503). In
 * cluster mode it is DEGRADED (200): every node shares the one database, so a load balancer that
 * took the DOWN nodes out would take all of them at once, and with them what still works without
 * PostgreSQL (rooms, the kill switch and the other policies, the admin event stream); the requests
 * that need it answer 503 STORE_UNAVAILABLE themselves.
 */
export const postgresReadiness =
  (available: () => boolean, clustered: boolean): (() => boolean | 'degraded') =>
  () =>
    available() ? true : clustered ? 'degraded' : false
