import WebSocket from 'ws'
import { Inbox, wsUrl, type Frame } from '../transport/clients.js'

export { Inbox, type Frame }

/** A terminal frame of a turn: the `complete` event or the simple `error` frame. */
export const isTerminal = (f: Frame): boolean =>
  f.event === 'complete' || (f.type === 'error' && f.sessionId !== undefined)

export interface AgentSocket {
  ws: WebSocket
  inbox: Inbox
  /** The `session` metadata frame the endpoint greets with (undefined for an unknown agent). */
  session: Frame | undefined
  closed: Promise<{ code: number; reason: string }>
  /** Sends a frame and resolves with every frame up to and including the turn's terminal one. */
  turn(frame: string): Promise<Frame[]>
}

/** Opens a WebSocket to an agent path; resolves once the greeting (or a first error frame) arrived. */
export async function agentSocket(
  base: string,
  path: string,
  headers: Record<string, string> = {}
): Promise<AgentSocket> {
  const ws = new WebSocket(wsUrl(base, path), { headers })
  const inbox = new Inbox()
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on('close', (code, reason) => {
      resolve({ code, reason: String(reason) })
    })
  })
  ws.on('error', () => {
    /* surfaced through close */
  })
  ws.on('message', (d) => {
    const text = String(d)
    try {
      inbox.push(JSON.parse(text))
    } catch {
      inbox.push({ raw: text })
    }
  })
  const first = await inbox.next()
  const session = first.type === 'metadata' && first.key === 'session' ? first : undefined
  return {
    ws,
    inbox,
    session,
    closed,
    turn: async (frame) => {
      ws.send(frame)
      return await untilTerminal(inbox)
    }
  }
}

/** Frames from the inbox up to and including the next terminal one. */
export async function untilTerminal(inbox: Inbox, ms = 10_000): Promise<Frame[]> {
  const out: Frame[] = []
  for (;;) {
    const f = await inbox.next(() => true, ms)
    out.push(f)
    if (isTerminal(f)) return out
  }
}

/** The text of a turn's `text-delta` frames. */
export function deltas(frames: Frame[]): string {
  return frames
    .filter((f) => f.event === 'text-delta')
    .map((f) => f.data.text as string)
    .join('')
}

/** POSTs a message and reads the SSE response to its end; returns the status and the data frames. */
export async function postTurn(
  base: string,
  path: string,
  body: string,
  headers: Record<string, string> = {}
): Promise<{ status: number; frames: Frame[]; body: string }> {
  const res = await fetch(base + path, { method: 'POST', body, headers })
  const text = await res.text()
  const frames: Frame[] = []
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    for (const line of text.split('\n')) if (line.startsWith('data: ')) frames.push(JSON.parse(line.slice(6)))
  return { status: res.status, frames, body: text }
}

/** Resolves once `pred` holds, polling every 10 ms; rejects after `ms`. */
export async function eventually(pred: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const until = Date.now() + ms
  while (!pred()) {
    if (Date.now() > until) throw new Error(`${what} still false after ${ms} ms`)
    await new Promise((r) => setTimeout(r, 10))
  }
}
