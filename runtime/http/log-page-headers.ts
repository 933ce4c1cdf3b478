/**
 * How a log listing (the control audit, the governance decisions) answers one page: the body
 * stays the plain array clients without paging expect; the next page and the count of denied
 * anonymous attempts travel in headers.
 */
import type { Context } from './context.js'

/** The `callers` query values of a log listing and the part of the log each reads. */
export const CALLERS = { all: undefined, authenticated: 'main', anonymous: 'anonymous' } as const
export type Callers = keyof typeof CALLERS

export interface LogPageAnswer {
  nextCursor?: string | undefined
  anonymousDenied: { counted: number; dropped: number }
}

/** Sets `X-Next-Cursor` and `Link` (when older entries remain) and the anonymous counts on `ctx`. */
export function setLogPageHeaders(
  ctx: Context,
  path: string,
  query: { limit: number; callers?: string | undefined },
  page: LogPageAnswer
): void {
  if (page.nextCursor !== undefined) {
    const next = new URLSearchParams({ limit: String(query.limit), cursor: page.nextCursor })
    if (query.callers !== undefined) next.set('callers', query.callers)
    ctx.setHeader('x-next-cursor', page.nextCursor)
    ctx.setHeader('link', `<${path}?${next.toString()}>; rel="next"`)
  }
  ctx.setHeader('x-anonymous-denied', String(page.anonymousDenied.counted))
  ctx.setHeader('x-anonymous-denied-dropped', String(page.anonymousDenied.dropped))
}
