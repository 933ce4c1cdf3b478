/**
 * How a log listing (the control audit, the governance decisions) answers one page: the body
 * stays the plain array clients without paging expect; the next page and the count of denied
 * anonymous attempts travel in headers.
 */
import type { Context } from './context.js'

export interface LogPageAnswer {
  nextCursor?: string | undefined
  anonymousDenied: { counted: number; dropped: number }
}

/** Sets `X-Next-Cursor` and `Link` (when older entries remain) and the anonymous counts on `ctx`. */
export function setLogPageHeaders(ctx: Context, path: string, limit: number, page: LogPageAnswer): void {
  if (page.nextCursor !== undefined) {
    const next = new URLSearchParams({ limit: String(limit), cursor: page.nextCursor })
    ctx.setHeader('x-next-cursor', page.nextCursor)
    ctx.setHeader('link', `<${path}?${next.toString()}>; rel="next"`)
  }
  ctx.setHeader('x-anonymous-denied', String(page.anonymousDenied.counted))
  ctx.setHeader('x-anonymous-denied-dropped', String(page.anonymousDenied.dropped))
}
