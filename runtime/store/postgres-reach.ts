import { PlatformError } from '../contracts/index.js'
import { STORE_ERRORS } from './errors.js'

// errno codes and SQLSTATEs (class 08 connection exception, 57P0x shutdown) of a server out of reach
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03'
])

/**
 * True when `e` says the server cannot be reached (refused, reset, shut down, timed out), as
 * opposed to a statement the server refused: the first is a 503 and heals, the second is a bug.
 */
export function isUnreachable(e: unknown): boolean {
  const code = (e as { code?: unknown }).code
  if (typeof code === 'string' && (UNREACHABLE.has(code) || code.startsWith('08'))) return true
  const msg = (e as Error).message ?? ''
  return /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
    msg
  )
}

/** The server named without its credentials, for logs and messages (`host:port/database`). */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url)
    return `${u.hostname}${u.port === '' ? '' : `:${u.port}`}${u.pathname}`
  } catch {
    return 'the configured server'
  }
}

/** The 503 every Postgres-backed store answers while its server is out of reach (no credentials in it). */
export const postgresUnavailable = (url: string): PlatformError =>
  new PlatformError(STORE_ERRORS.STORE_UNAVAILABLE, { store: `PostgreSQL at ${describeUrl(url)}` })

/**
 * A Postgres-backed store's readiness: up, or out of reach. On one node that is DOWN (503). In
 * cluster mode it is DEGRADED (200): every node shares the one database, so a load balancer that
 * took the DOWN nodes out would take all of them at once, and with them what still works without
 * Postgres (rooms, the live streams of runs in memory); the requests that need it answer 503 themselves.
 */
export const postgresReadiness =
  (available: () => boolean, clustered: boolean): (() => boolean | 'degraded') =>
  () =>
    available() ? true : clustered ? 'degraded' : false
