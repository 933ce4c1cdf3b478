/**
 * The `fetch` the SDK client's Streamable HTTP transport is given for another MCP server: each
 * request on node:http(s) over a keep-alive agent of that server's own, answered as a WHATWG
 * Response. The global fetch (undici's) costs several times node:http's CPU per request, and the
 * gateway pays it on every tool call it forwards. Only what the transport uses is offered: a
 * string or byte body, no redirect following (the SDK follows same-origin redirects itself and asks
 * for `redirect: 'manual'`), an abort signal, and a streamed body for `text/event-stream` answers.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { Readable } from 'node:stream'
import { urlToHttpOptions } from 'node:url'

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>
/** What `new Response` takes as a body: named here, as Node's and the DOM's typings spell it differently. */
type Body = ConstructorParameters<typeof Response>[0]

/** Statuses whose response has no body by definition: `new Response` refuses one. */
const NULL_BODY = new Set([101, 103, 204, 205, 304])

const abortError = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException('This operation was aborted', 'AbortError')

function headersOf(h: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {}
  if (h === undefined) return out
  if (h instanceof Headers)
    h.forEach((v, k) => {
      out[k] = v
    })
  else if (Array.isArray(h)) for (const [k, v] of h) out[k!.toLowerCase()] = v!
  else for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = ([] as string[]).concat(v).join(', ')
  return out
}

function bodyOf(b: RequestInit['body']): string | Uint8Array | undefined {
  if (b === undefined || b === null) return undefined
  if (typeof b === 'string' || b instanceof Uint8Array) return b
  throw new TypeError('this fetch sends string or byte bodies only')
}

function responseInit(r: IncomingMessage): ResponseInit {
  const headers = new Headers()
  for (let i = 0; i < r.rawHeaders.length; i += 2) headers.append(r.rawHeaders[i]!, r.rawHeaders[i + 1]!)
  return { status: r.statusCode!, statusText: r.statusMessage ?? '', headers }
}

/**
 * A POST's buffered answer with what the SDK transport reads of a Response (`ok`, `status`,
 * `statusText`, `headers.get`, `text()`, `json()`, `body?.cancel()`, `type`, `url`), built without
 * undici: its Response and Headers cost about as much CPU as the request itself. The SDK version
 * is pinned; the external-server tests run every path of the transport through it.
 */
function bufferedResponse(r: IncomingMessage, bytes: Buffer): Response {
  const status = r.statusCode!
  const raw = r.headers
  const get = (name: string): string | null => {
    const v = raw[name.toLowerCase()]
    return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v
  }
  const text = (): string => bytes.toString('utf8')
  const response = {
    status,
    statusText: r.statusMessage ?? '',
    ok: status >= 200 && status < 300,
    type: 'basic',
    url: '',
    redirected: false,
    headers: { get, has: (name: string) => get(name) !== null },
    body: null,
    bodyUsed: false,
    text: () => Promise.resolve(text()),
    json: () => new Promise<unknown>((resolve) => resolve(JSON.parse(text())))
  }
  return response as unknown as Response
}

export class KeepAliveFetch {
  readonly #http = new HttpAgent({ keepAlive: true })
  readonly #https = new HttpsAgent({ keepAlive: true })
  /**
   * The requests in flight under each signal: a transport gives all its requests one signal, so one
   * listener per signal ends them all (a listener per request would pile up past Node's warning).
   */
  readonly #aborts = new WeakMap<AbortSignal, Set<() => void>>()
  /** node:http's options of the last URL asked for: the transport asks for the same one every time. */
  #target: { href: string; options: ReturnType<typeof urlToHttpOptions> } | undefined

  readonly fetch: FetchLike = (url, init = {}) => {
    const signal = init.signal ?? undefined
    if (signal?.aborted === true) return Promise.reject(abortError(signal))
    const u = typeof url === 'string' ? new URL(url) : url
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      return Promise.reject(new TypeError(`fetch of ${u.protocol} URLs is not supported`))
    let body: string | Uint8Array | undefined
    try {
      body = bodyOf(init.body)
    } catch (err) {
      return Promise.reject(err)
    }
    const headers = headersOf(init.headers)
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body))
    const method = (init.method ?? 'GET').toUpperCase()
    return this.#send(u, method, headers, body, signal)
  }

  #onAbort(signal: AbortSignal): Set<() => void> {
    let set = this.#aborts.get(signal)
    if (set === undefined) {
      const added = new Set<() => void>()
      set = added
      this.#aborts.set(signal, added)
      signal.addEventListener(
        'abort',
        () => {
          for (const f of [...added]) f()
        },
        { once: true }
      )
    }
    return set
  }

  /** Closes the idle connections; a request still running keeps its own until it ends. */
  close(): void {
    this.#http.destroy()
    this.#https.destroy()
  }

  #send(
    u: URL,
    method: string,
    headers: Record<string, string>,
    body: string | Uint8Array | undefined,
    signal: AbortSignal | undefined
  ): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      const https = u.protocol === 'https:'
      const href = u.href
      if (this.#target?.href !== href) this.#target = { href, options: urlToHttpOptions(u) }
      const options = { ...this.#target.options, method, headers, agent: https ? this.#https : this.#http }
      let res: IncomingMessage | undefined
      let settled = false
      const onAbort = (): void => {
        const err = abortError(signal!)
        req.destroy(err as Error)
        res?.destroy(err as Error)
        fail(err)
      }
      const done = (): void => {
        if (signal !== undefined) this.#aborts.get(signal)?.delete(onAbort)
      }
      const fail = (err: unknown): void => {
        done()
        if (settled) return
        settled = true
        reject(err)
      }
      const req: ClientRequest = (https ? httpsRequest : httpRequest)(options, (r) => {
        res = r
        const status = r.statusCode ?? 0
        if (status < 200 || status > 599) {
          r.destroy()
          fail(new TypeError(`fetch failed: ${u.origin} answered status ${status}`))
          return
        }
        if (NULL_BODY.has(status) || method === 'HEAD') {
          r.resume()
          r.once('end', done)
          settled = true
          resolve(new Response(null, responseInit(r)))
          return
        }
        if ((r.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          // a stream of events stays open: its body is handed over as it comes, abortable until it closes
          r.once('close', done)
          settled = true
          resolve(new Response(Readable.toWeb(r) as unknown as Body, responseInit(r)))
          return
        }
        const chunks: Buffer[] = []
        r.on('data', (c: Buffer) => chunks.push(c))
        r.once('end', () => {
          done()
          if (settled) return
          settled = true
          const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
          // the answer to each POST (every tool call) is read as JSON or text and dropped: no WHATWG
          // Response for it; a GET (the transport's event stream) gets a real one, read as a stream
          resolve(
            method === 'POST' ? bufferedResponse(r, bytes) : new Response(bytes as unknown as Body, responseInit(r))
          )
        })
        r.once('error', (err) => fail(new TypeError('fetch failed', { cause: err })))
        r.once('close', () => {
          if (!r.complete) fail(new TypeError('fetch failed', { cause: new Error('the response was cut short') }))
        })
      })
      // never sent again: a tool call is not idempotent (undici's fetch does not retry either; the
      // agent closes an idle connection before the server's Keep-Alive timeout says it would)
      req.once('error', (err) => fail(new TypeError('fetch failed', { cause: err })))
      if (signal !== undefined) this.#onAbort(signal).add(onAbort)
      req.end(body)
    })
  }
}
