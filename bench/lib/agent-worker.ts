/**
 * An agent-turn load worker: clients that each send one prompt and read the streamed reply, over
 * the platform's agent endpoint (WebSocket: `text-delta` event frames until `complete`) or over an
 * SSE POST (the AI SDK's UI message stream: `data:` events with `type: text-delta` until `[DONE]`;
 * the platform's one-shot POST, whose `data:` events are the agent frames until `complete`; or
 * OpenAI's Responses stream, `response.output_text.delta` events until `response.completed`).
 * Each client keeps its token count; the first one also keeps the text, so the scenario can check
 * both servers streamed the same tokens. Driven by bench/lib/agent-load.ts over postMessage.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { request, Agent } from 'node:http'
import WebSocket from 'ws'

export type AgentWorkerCommand =
  | { cmd: 'turns'; count: number; message: string; concurrency: number }
  | { cmd: 'hold'; count: number; message: string; concurrency: number }
  | { cmd: 'release' }

export type AgentWorkerEvent =
  | { ev: 'turns'; ok: number; failed: number; tokens: number; minTokens: number; text: string; error?: string }
  | { ev: 'held'; ok: number; failed: number; error?: string }
  /** `open`: held sockets still open at release (the others were closed by the server while idle) */
  | { ev: 'released'; open: number }

export interface AgentWorkerInit {
  mode: 'ws' | 'sse' | 'responses'
  /** ws:// URL of the agent endpoint, or http:// URL to POST to */
  url: string
  /** `responses`: the model (an agent) and the bearer token of the requests */
  model?: string
  token?: string
}

/** An SSE event's data: an AI SDK UI message part, one of the platform's agent frames, or a Responses event. */
interface SsePart {
  type?: string
  delta?: string
  event?: string
  data?: unknown
}

interface Reply {
  tokens: number
  text: string
}

const init = workerData as AgentWorkerInit
const port = parentPort!
// one connection per client: no socket reuse between clients
const agent = new Agent({ keepAlive: false, maxSockets: Infinity })
const held: WebSocket[] = []
// the clients stay cheap so the servers, not the clients, are measured: a delta frame is counted
// from its first bytes, and only the client that keeps the text (and every other frame) is parsed
const WS_DELTA = '{"event":"text-delta",'
const SDK_DELTA = '{"type":"text-delta",'

/**
 * The tokens of a Responses delta: the demo runtime's tokens are words with the whitespace after
 * them, and the platform may send several in one delta (text coalesced into one step), so a
 * delta's tokens are its runs of non-whitespace.
 */
function words(text: string): number {
  let n = 0
  let inWord = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const space = c === 32 || c === 10 || c === 9 || c === 13
    if (!space && !inWord) n++
    inWord = !space
  }
  return n
}

/** One WebSocket turn; resolves with the reply once `complete` arrives; `keep` leaves the socket open. */
function wsTurn(message: string, keepText: boolean, keep: boolean): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(init.url, { perMessageDeflate: false, skipUTF8Validation: true })
    let tokens = 0
    let text = ''
    let done = false
    const fail = (e: Error) => {
      if (done) return
      done = true
      ws.terminate()
      reject(e)
    }
    ws.on('open', () => {
      ws.send(message)
    })
    ws.on('message', (data: Buffer) => {
      if (!keepText && data.toString('latin1', 0, WS_DELTA.length) === WS_DELTA) {
        tokens++
        return
      }
      const f = JSON.parse(data.toString()) as { event?: string; type?: string; data?: { text?: string } | string }
      if (f.event === 'text-delta') {
        tokens++
        if (keepText) text += (f.data as { text: string }).text
      } else if (f.type === 'complete' || f.event === 'complete') {
        if (done) return
        done = true
        if (keep) held.push(ws)
        else ws.close()
        resolve({ tokens, text })
      } else if (f.type === 'error' || f.event === 'error') {
        fail(new Error(`error frame: ${data.toString().slice(0, 200)}`))
      }
    })
    ws.on('error', fail)
    ws.on('close', () => {
      fail(new Error('closed before complete'))
    })
  })
}

/**
 * One SSE POST; resolves with the reply once the stream ends after `[DONE]` (AI SDK), `complete`
 * (platform) or `response.completed` (Responses).
 */
function sseTurn(message: string, keepText: boolean): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const responses = init.mode === 'responses'
    const body = JSON.stringify(responses ? { model: init.model, input: message, stream: true } : { message })
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body)
    }
    if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`
    const req = request(
      init.url,
      {
        method: 'POST',
        agent,
        headers
      },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`HTTP ${res.statusCode}`))
          res.resume()
          return
        }
        res.setEncoding('utf8')
        let buf = ''
        let tokens = 0
        let text = ''
        let finished = false
        res.on('data', (chunk: string) => {
          buf += chunk
          let i: number
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i)
            buf = buf.slice(i + 2)
            // an event's data lines (`data: x`), joined; other fields (id, event, comments) ignored
            const data = block
              .split('\n')
              .filter((l) => l.startsWith('data:'))
              .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
              .join('\n')
            if (data === '') continue
            if (data === '[DONE]') {
              finished = true
              continue
            }
            if (!keepText && (data.startsWith(SDK_DELTA) || data.startsWith(WS_DELTA))) {
              tokens++
              continue
            }
            const part = JSON.parse(data) as SsePart
            if (part.type === 'response.output_text.delta') {
              tokens += words(part.delta ?? '')
              if (keepText) text += part.delta
            } else if (part.type === 'response.completed') finished = true
            else if (part.type === 'response.failed' || part.type === 'response.incomplete')
              reject(new Error(`${part.type}: ${data.slice(0, 200)}`))
            else if (part.type === 'text-delta') {
              // the AI SDK's UI message stream
              tokens++
              if (keepText) text += part.delta
            } else if (part.event === 'text-delta') {
              // the platform's agent endpoint: its WebSocket frames as SSE data
              tokens++
              if (keepText) text += (part.data as { text: string }).text
            } else if (part.event === 'complete') finished = true
            else if (part.type === 'error' || part.event === 'error')
              reject(new Error(`error event: ${data.slice(0, 200)}`))
          }
        })
        res.on('end', () => {
          if (finished) resolve({ tokens, text })
          else reject(new Error('stream ended before [DONE] or complete'))
        })
        res.on('error', reject)
      }
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** Runs `count` clients with at most `concurrency` connecting at once; every started client runs to its end. */
async function clients(
  count: number,
  concurrency: number,
  one: (i: number) => Promise<Reply>
): Promise<{ ok: number; failed: number; replies: Reply[]; error?: string }> {
  const replies: Reply[] = []
  let failed = 0
  let error: string | undefined
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++
      try {
        replies[i] = await one(i)
      } catch (e) {
        failed++
        error ??= (e as Error).message
      }
    }
  }
  // each lane runs whole turns, so `concurrency` lanes are `concurrency` clients in flight
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane))
  return { ok: count - failed, failed, replies: replies.filter((r) => r !== undefined), ...(error ? { error } : {}) }
}

port.on('message', (c: AgentWorkerCommand) => {
  void (async () => {
    if (c.cmd === 'turns') {
      const r = await clients(c.count, c.concurrency, (i) =>
        init.mode === 'ws' ? wsTurn(c.message, i === 0, false) : sseTurn(c.message, i === 0)
      )
      const tokens = r.replies.reduce((a, x) => a + x.tokens, 0)
      const minTokens = r.replies.reduce((a, x) => Math.min(a, x.tokens), Number.MAX_SAFE_INTEGER)
      const ev: AgentWorkerEvent = {
        ev: 'turns',
        ok: r.ok,
        failed: r.failed,
        tokens,
        minTokens: r.replies.length === 0 ? 0 : minTokens,
        text: r.replies[0]?.text ?? '',
        ...(r.error !== undefined ? { error: r.error } : {})
      }
      port.postMessage(ev)
    } else if (c.cmd === 'hold') {
      const r = await clients(c.count, c.concurrency, () => wsTurn(c.message, false, true))
      port.postMessage({
        ev: 'held',
        ok: r.ok,
        failed: r.failed,
        ...(r.error !== undefined ? { error: r.error } : {})
      } satisfies AgentWorkerEvent)
    } else {
      let open = 0
      for (const ws of held.splice(0)) {
        if (ws.readyState === WebSocket.OPEN) open++
        ws.terminate()
      }
      port.postMessage({ ev: 'released', open } satisfies AgentWorkerEvent)
    }
  })()
})
