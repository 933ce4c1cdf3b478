// Subscribers of /platform/admin/events over real sockets: a WebSocket and an SSE reader.
import WebSocket from 'ws'
import { Inbox, type Frame } from '../transport/clients.js'

export const EVENTS = '/platform/admin/events'

export interface EventSubscriber {
  inbox: Inbox
  /** Frames as they came (a WebSocket message holds exactly one event). */
  frames: number
  /** WebSocket messages that held an array (the stream never sends one). */
  arrays: number
  close: () => void
  closed: Promise<{ code: number; reason: string }>
  ws?: WebSocket
}

/** Opens a WebSocket subscriber; resolves once open (rejects with the refusal's status and body). */
export async function wsEvents(
  base: string,
  query = '',
  headers: Record<string, string> = {}
): Promise<EventSubscriber> {
  const ws = new WebSocket(base.replace(/^http/, 'ws') + EVENTS + query, { headers })
  const inbox = new Inbox()
  const sub: EventSubscriber = {
    inbox,
    frames: 0,
    arrays: 0,
    ws,
    close: () => ws.close(),
    closed: new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })))
  }
  ws.on('message', (data) => {
    sub.frames++
    const v = JSON.parse(String(data)) as Frame | Frame[]
    if (Array.isArray(v)) sub.arrays++
    for (const e of Array.isArray(v) ? v : [v]) inbox.push(e)
  })
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (c: Buffer) => (body += String(c)))
      res.on('end', () =>
        reject(Object.assign(new Error('refused'), { status: res.statusCode, body: JSON.parse(body) }))
      )
    })
    ws.once('error', reject)
  })
  return sub
}

export interface SseSubscriber extends EventSubscriber {
  /** `id:` of each event, in order. */
  ids: number[]
  /** The same ids as sent (a cluster's are cursors, `node:seq,node:seq`). */
  idTexts: string[]
  comments: string[]
}

/** Opens an SSE subscriber with fetch; `id:` and `data:` lines per event. */
export async function sseEvents(
  base: string,
  query = '',
  headers: Record<string, string> = {}
): Promise<SseSubscriber> {
  const ac = new AbortController()
  const res = await fetch(base + EVENTS + query, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: ac.signal
  })
  if (res.status !== 200)
    throw Object.assign(new Error('refused'), { status: res.status, body: JSON.parse(await res.text()) })
  const inbox = new Inbox()
  let onEnd: (v: { code: number; reason: string }) => void = () => {}
  const sub: SseSubscriber = {
    inbox,
    frames: 0,
    arrays: 0,
    ids: [],
    idTexts: [],
    comments: [],
    close: () => ac.abort(),
    closed: new Promise((resolve) => (onEnd = resolve))
  }
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  void (async () => {
    let buf = ''
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        sub.frames++
        buf += dec.decode(value, { stream: true })
        let i
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i)
          buf = buf.slice(i + 2)
          let data = ''
          for (const l of block.split('\n')) {
            if (l.startsWith(':')) sub.comments.push(l.slice(1).trim())
            else if (l.startsWith('id: ')) {
              sub.ids.push(Number(l.slice(4)))
              sub.idTexts.push(l.slice(4))
            } else if (l.startsWith('data: ')) data += l.slice(6)
          }
          if (data !== '') inbox.push(JSON.parse(data) as Frame)
        }
      }
    } catch {
      /* aborted */
    }
    onEnd({ code: 0, reason: 'ended' })
  })()
  return sub
}

/** Waits until `sub` has an event with seq ≥ `seq`. */
export async function reach(sub: EventSubscriber, seq: number): Promise<void> {
  if (sub.inbox.all.some((e) => e.seq >= seq)) return
  await sub.inbox.next((e) => e.seq >= seq)
}
