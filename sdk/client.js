// uws-agent-platform/client: the typed client of the interactions API, for browsers and Node alike
// (pure ESM, fetch and WebSocket only). See client.d.ts for the types.
import { PlatformApiError, streamInteraction } from './client-stream.js'

export { PlatformApiError, STREAM_PATH } from './client-stream.js'

const BASE = '/api/interactions'

export class PlatformClient {
  /**
   * @param {{baseUrl: string, token?: string, fetch?: typeof fetch, WebSocket?: unknown}} options
   */
  constructor(options) {
    if (options === null || typeof options !== 'object' || typeof options.baseUrl !== 'string')
      throw new TypeError('PlatformClient needs { baseUrl }')
    const f = options.fetch ?? globalThis.fetch
    if (typeof f !== 'function') throw new TypeError('no fetch: pass options.fetch')
    this.opts = {
      baseUrl: options.baseUrl.endsWith('/') ? options.baseUrl : options.baseUrl + '/',
      token: options.token,
      fetch: (url, init) => f(url, init),
      WebSocket: options.WebSocket
    }
  }

  async request(method, path, body, headers = {}) {
    return (await this.exchange(method, path, body, headers)).body
  }

  /** One REST call: the parsed body and the response headers; a refusal throws PlatformApiError. */
  async exchange(method, path, body, headers = {}) {
    const h = { accept: 'application/json', ...headers }
    if (this.opts.token !== undefined) h.authorization = `Bearer ${this.opts.token}`
    if (body !== undefined) h['content-type'] = 'application/json'
    const res = await this.opts.fetch(new URL(path.replace(/^\//, ''), this.opts.baseUrl).href, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await res.text()
    let parsed
    try {
      parsed = text === '' ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    if (!res.ok) throw new PlatformApiError(res.status, parsed)
    return { body: parsed, headers: res.headers }
  }

  /** Starts an interaction; `idempotencyKey` makes a retried create return the first one. */
  create(body, options = {}) {
    return this.request('POST', BASE, body, keyHeader(options))
  }

  /** Starts the next turn after interaction `id` (same conversation). */
  continue(id, body, options = {}) {
    return this.request('POST', `${BASE}/${enc(id)}/continue`, body, keyHeader(options))
  }

  get(id) {
    return this.request('GET', `${BASE}/${enc(id)}`)
  }

  /** One page of the caller's interactions, newest first; `nextCursor` fetches the next one. */
  async list(query = {}) {
    const q = new URLSearchParams()
    for (const k of ['conversationId', 'limit', 'cursor']) if (query[k] !== undefined) q.set(k, String(query[k]))
    const s = q.toString()
    const { body, headers } = await this.exchange('GET', s === '' ? BASE : `${BASE}?${s}`)
    // the body is a plain array; the next page's cursor travels in a header
    const next = headers.get('x-next-cursor')
    return next === null ? { items: body } : { items: body, nextCursor: next }
  }

  cancel(id) {
    return this.request('POST', `${BASE}/${enc(id)}/cancel`, {})
  }

  async delete(id) {
    await this.request('DELETE', `${BASE}/${enc(id)}`)
  }

  /**
   * The interaction's steps after `after` (all by default) and its terminal frame, live, as an
   * async iterator that reconnects by itself and never repeats or skips a seq.
   */
  stream(id, options = {}) {
    return streamInteraction(this.opts, id, options)
  }
}

function enc(id) {
  if (typeof id !== 'string' || id === '') throw new TypeError('an interaction id is a non-empty string')
  return encodeURIComponent(id)
}

function keyHeader(options) {
  return options.idempotencyKey !== undefined ? { 'idempotency-key': String(options.idempotencyKey) } : {}
}
