// The live stream of one interaction for uws-agent-platform/client: WebSocket first, SSE over fetch when
// WebSocket is missing or fails before it opens; reconnects on its own and resumes after the last
// seq it saw, so the caller sees every step exactly once. Pure ESM with no Node API: browsers load it.

export const STREAM_PATH = '/platform/interactions-stream'

/** An error the server answered (4xx/5xx with `{error, code, hint?}`): retrying cannot help. */
export class PlatformApiError extends Error {
  constructor(status, body) {
    super(body && typeof body.error === 'string' ? body.error : `HTTP ${status}`)
    this.name = 'PlatformApiError'
    this.status = status
    this.code = body && typeof body.code === 'string' ? body.code : undefined
    this.hint = body && typeof body.hint === 'string' ? body.hint : undefined
  }
}

const isFatal = (err) => err instanceof PlatformApiError && err.status < 500

let wsModule
/** The WebSocket class to use: the global one (browsers), else the `ws` package when installed. */
async function webSocketClass(given) {
  if (given !== undefined) return given
  if (typeof globalThis.WebSocket === 'function') return globalThis.WebSocket
  if (wsModule === undefined) {
    // a computed specifier keeps bundlers from insisting on `ws` in browser builds
    const name = 'ws'
    wsModule = import(name).then(
      (m) => m.WebSocket ?? m.default,
      () => null
    )
  }
  return (await wsModule) ?? undefined
}

/** A queue the transports push frames into and the iterator pulls from. */
function channel() {
  const items = []
  let wake
  return {
    push(x) {
      items.push(x)
      wake?.()
      wake = undefined
    },
    async next() {
      while (items.length === 0) await new Promise((r) => (wake = r))
      return items.shift()
    }
  }
}

function streamUrl(base, id, after, token, withToken) {
  const u = new URL(STREAM_PATH, base)
  u.searchParams.set('id', id)
  if (after >= 0) u.searchParams.set('after', String(after))
  if (withToken && token !== undefined) u.searchParams.set('access_token', token)
  return u
}

/** One WebSocket connection; pushes {frame}, then {end, opened, error?}. */
async function connectWs(WS, opts, id, after, ch, signal) {
  const isNodeWs = WS !== globalThis.WebSocket
  const url = streamUrl(opts.baseUrl, id, after, opts.token, !isNodeWs)
  if (url.protocol === 'http:') url.protocol = 'ws:'
  else if (url.protocol === 'https:') url.protocol = 'wss:'
  const headers = opts.token !== undefined ? { authorization: `Bearer ${opts.token}` } : {}
  const ws = isNodeWs ? new WS(url.href, { headers }) : new WS(url.href)
  let opened = false
  let done = false
  const finish = (error) => {
    if (done) return
    done = true
    signal.removeEventListener('abort', onAbort)
    ch.push({ end: true, opened, error })
  }
  const onAbort = () => {
    try {
      ws.close()
    } catch {
      /* not open yet */
    }
    finish()
  }
  signal.addEventListener('abort', onAbort)
  ws.onopen = () => {
    opened = true
  }
  ws.onmessage = (ev) => {
    try {
      ch.push({ frame: JSON.parse(typeof ev.data === 'string' ? ev.data : String(ev.data)) })
    } catch {
      /* not a frame of ours */
    }
  }
  ws.onclose = () => finish()
  ws.onerror = () => {}
  if (isNodeWs && typeof ws.on === 'function')
    // the `ws` package tells why an upgrade was refused: the platform's JSON error body
    ws.on('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (c) => (body += c))
      res.on('end', () => {
        let parsed
        try {
          parsed = JSON.parse(body)
        } catch {
          parsed = undefined
        }
        finish(new PlatformApiError(res.statusCode, parsed))
        ws.terminate?.()
      })
    })
}

/** One SSE response read through fetch; pushes {frame} per event, then {end, opened, error?}. */
async function connectSse(opts, id, after, ch, signal) {
  const url = streamUrl(opts.baseUrl, id, after, undefined, false)
  const headers = { accept: 'text/event-stream' }
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  let opened = false
  try {
    const res = await opts.fetch(url.href, { headers, signal })
    if (!res.ok) {
      let body
      try {
        body = await res.json()
      } catch {
        body = undefined
      }
      ch.push({ end: true, opened, error: new PlatformApiError(res.status, body) })
      return
    }
    opened = true
    const reader = res.body.getReader()
    const decoder = new TextDecoder()
    let buf = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n')
      let cut
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut)
        buf = buf.slice(cut + 2)
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(l[5] === ' ' ? 6 : 5))
          .join('\n')
        if (data === '') continue
        try {
          ch.push({ frame: JSON.parse(data) })
        } catch {
          /* not a frame of ours */
        }
      }
    }
    ch.push({ end: true, opened })
  } catch (err) {
    ch.push({ end: true, opened, error: signal.aborted ? undefined : err })
  }
}

/**
 * The steps of interaction `id` after seq `after`, then its terminal frame, as an async iterator.
 * A dropped connection is reopened after a short backoff from the last seq seen; a refusal (unknown
 * id, no access) throws PlatformApiError; breaking out of the loop closes the connection.
 */
export async function* streamInteraction(opts, id, options = {}) {
  let last = options.after ?? -1
  let transport = options.transport ?? 'auto'
  const maxRetries = options.maxRetries ?? Infinity
  const ac = new AbortController()
  const outer = options.signal
  const onOuter = () => ac.abort()
  outer?.addEventListener('abort', onOuter)
  let failures = 0
  let wsWorked = false
  try {
    while (!ac.signal.aborted) {
      const ch = channel()
      let WS
      if (transport !== 'sse') WS = await webSocketClass(opts.WebSocket)
      if (WS === undefined) transport = 'sse'
      const connAc = new AbortController()
      const stopConn = () => connAc.abort()
      ac.signal.addEventListener('abort', stopConn)
      if (transport === 'sse') void connectSse(opts, id, last, ch, connAc.signal)
      else void connectWs(WS, opts, id, last, ch, connAc.signal)
      let progressed = false
      let ended
      for (;;) {
        const item = await ch.next()
        if (item.end) {
          ended = item
          break
        }
        const f = item.frame
        if (f.type === 'interaction-step' && f.step && typeof f.step.seq === 'number') {
          if (f.step.seq <= last) continue
          last = f.step.seq
          progressed = true
          yield f
        } else if (f.type === 'interaction-terminal') {
          connAc.abort()
          yield f
          return
        }
      }
      ac.signal.removeEventListener('abort', stopConn)
      if (ac.signal.aborted) return
      if (ended.error !== undefined && isFatal(ended.error)) throw ended.error
      // a WebSocket that never opened (no global, blocked by a proxy): SSE from now on
      if (transport === 'auto' && ended.opened) wsWorked = true
      if (transport === 'auto' && !ended.opened && !wsWorked) transport = 'sse'
      failures = progressed || ended.opened ? 0 : failures + 1
      if (failures > maxRetries) throw ended.error ?? new Error(`interaction stream ${id}: connection failed`)
      const delay = Math.min(options.maxRetryDelayMs ?? 2000, (options.retryDelayMs ?? 50) * 2 ** Math.min(failures, 8))
      await new Promise((r) => setTimeout(r, delay))
    }
  } finally {
    ac.abort()
    outer?.removeEventListener('abort', onOuter)
  }
}
