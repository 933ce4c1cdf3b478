/**
 * One delivery attempt: resolve the URL's host, refuse an address the allow-list does not admit,
 * and POST to exactly that address (the connection's lookup is pinned to it, so nothing resolves
 * the name a second time between the check and the connect). No redirect is followed, and the
 * receiver's answer body is read and thrown away; the whole exchange has one deadline.
 */
import { lookup } from 'node:dns/promises'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { hostOf, type HostAllowList } from './allowed-hosts.js'

export interface AttemptResult {
  ok: boolean
  /** The receiver's status, when it answered. */
  status?: number
  /** Why the attempt failed, when it did not answer (or answered no 2xx). */
  error?: string
  /** The receiver's Retry-After, in milliseconds. */
  retryAfterMs?: number
  /** A failure no retry can mend (the address is not allowed, the receiver answered 410 Gone). */
  final?: boolean
}

export interface AttemptOptions {
  allow: HostAllowList
  timeoutMs: number
  /** Aborts the attempt (the platform is closing). */
  signal: AbortSignal
}

export async function attemptDelivery(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  o: AttemptOptions
): Promise<AttemptResult> {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    return { ok: false, error: 'invalid URL', final: true }
  }
  const host = hostOf(url)
  // the list may have changed since the URL was accepted: a host taken off it is no longer reached
  if (!o.allow.allowsHost(host)) return { ok: false, error: `host ${host} is not allowed`, final: true }
  let address: string
  let family: number
  if (isIP(host) !== 0) {
    address = host
    family = isIP(host)
  } else {
    try {
      const found = await lookup(host, { all: true, verbatim: true })
      const refused = found.find((a) => !o.allow.allowsAddress(a.address))
      // every address must pass: a resolver answering one public and one private address gets neither
      if (refused !== undefined)
        return {
          ok: false,
          error: `host ${host} resolves to ${refused.address}, a private address not on platform.webhooks.allowed-hosts`,
          final: true
        }
      if (found.length === 0) return { ok: false, error: `host ${host} resolves to no address` }
      address = found[0]!.address
      family = found[0]!.family
    } catch (err) {
      return { ok: false, error: `resolving ${host} failed: ${(err as NodeJS.ErrnoException).code ?? 'error'}` }
    }
  }
  if (!o.allow.allowsAddress(address))
    return { ok: false, error: `address ${address} is not on platform.webhooks.allowed-hosts`, final: true }
  return await post(url, address, family, headers, body, o)
}

function post(
  url: URL,
  address: string,
  family: number,
  headers: Record<string, string>,
  body: string,
  o: AttemptOptions
): Promise<AttemptResult> {
  const pinned: LookupFunction = (_host, opts, cb) => {
    // with autoSelectFamily the connection asks for every address at once
    if (opts.all === true) cb(null, [{ address, family }])
    else cb(null, address, family)
  }
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve) => {
    let settled = false
    const done = (r: AttemptResult): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      o.signal.removeEventListener('abort', abort)
      resolve(r)
    }
    const req = request(url, {
      method: 'POST',
      lookup: pinned,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: false
    })
    const timer = setTimeout(() => {
      req.destroy()
      done({ ok: false, error: `no answer within ${o.timeoutMs} ms` })
    }, o.timeoutMs)
    const abort = (): void => {
      req.destroy()
      done({ ok: false, error: 'aborted: the platform is closing' })
    }
    o.signal.addEventListener('abort', abort)
    req.on('error', (err: NodeJS.ErrnoException) => {
      done({ ok: false, error: `request failed: ${err.code ?? err.message}` })
    })
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0
      res.on('error', () => {})
      // the answer's body means nothing to us: drain it so the exchange ends, within the deadline
      res.resume()
      res.on('end', () => {
        const ok = status >= 200 && status < 300
        const retryAfterMs = ok ? undefined : retryAfter(res.headers['retry-after'])
        done({
          ok,
          status,
          ...(ok ? {} : { error: `answered ${status}` }),
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
          ...(status === 410 ? { final: true } : {})
        })
      })
    })
    if (o.signal.aborted) abort()
    else req.end(body)
  })
}

/** A Retry-After header (seconds or an HTTP date) in milliseconds from now; undefined when absent or unreadable. */
export function retryAfter(v: string | undefined, now = Date.now()): number | undefined {
  if (v === undefined || v.trim() === '') return undefined
  if (/^\d{1,10}$/.test(v.trim())) return Number(v.trim()) * 1000
  const at = Date.parse(v)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}
