import type WebSocket from 'ws'
import { Inbox, jsonSocket, wsUrl, type Frame } from '../transport/clients.js'

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
  const { ws, inbox, closed } = jsonSocket(wsUrl(base, path), headers)
  const first = await Promise.race([
    inbox.next(),
    closed.then((c) => {
      if (inbox.all.length > 0) return inbox.all[0]!
      throw new Error(`closed with ${c.code} before any frame`)
    })
  ])
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

export interface AgentMember {
  uuid: string
  token: string
  session: Frame
  inbox: Inbox
  /** SSE comment lines received (heartbeats); empty for long-polling. */
  comments: string[]
  /** POSTs one frame as this member; resolves with the response status. */
  send(body: string): Promise<number>
  /** Leaves (DELETE as the member), then drops the connection. */
  stop(): Promise<void>
}

async function leave(base: string, path: string, uuid: string, token: string): Promise<void> {
  const res = await fetch(base + path, {
    method: 'DELETE',
    headers: { 'x-platform-resource': uuid, 'x-platform-token': token }
  })
  await res.arrayBuffer()
}

function memberSend(base: string, path: string, uuid: string, token: string) {
  return async (body: string): Promise<number> => {
    const res = await fetch(base + path, {
      method: 'POST',
      body,
      headers: { 'x-platform-resource': uuid, 'x-platform-token': token }
    })
    await res.arrayBuffer()
    return res.status
  }
}

/** Joins an agent over SSE (GET); its uuid and token come in the greeting frame. */
export async function sseAgent(base: string, path: string, headers: Record<string, string> = {}): Promise<AgentMember> {
  const ac = new AbortController()
  const res = await fetch(base + path, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal })
  if (res.status !== 200) throw new Error('SSE status ' + res.status + ' ' + (await res.text()))
  const inbox = new Inbox()
  const comments: string[] = []
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  void (async () => {
    let buf = ''
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        buf += dec.decode(value, { stream: true })
        let i
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i)
          buf = buf.slice(i + 2)
          for (const l of block.split('\n')) {
            if (l.startsWith('data: ')) inbox.push(JSON.parse(l.slice(6)))
            else if (l.startsWith(':')) comments.push(l.slice(1).trim())
          }
        }
      }
    } catch {
      /* aborted */
    }
  })()
  const session = await inbox.next((f) => f.key === 'session')
  const { uuid, token } = session.value as { uuid: string; token: string }
  return {
    uuid,
    token,
    session,
    inbox,
    comments,
    send: memberSend(base, path, uuid, token),
    stop: async () => {
      await leave(base, path, uuid, token).catch(() => {})
      ac.abort()
    }
  }
}

/** Joins an agent over long-polling and keeps one poll open at a time. */
export async function lpAgent(base: string, path: string, headers: Record<string, string> = {}): Promise<AgentMember> {
  const url = base + path + '?transport=long-polling'
  const first = await fetch(url, { headers })
  if (first.status !== 200) throw new Error('long-polling join ' + first.status + ' ' + (await first.text()))
  const body = (await first.json()) as { uuid: string; token: string; messages: Frame[] }
  const inbox = new Inbox()
  for (const m of body.messages) inbox.push(m)
  const ac = new AbortController()
  let running = true
  void (async () => {
    while (running) {
      let r: Response
      try {
        r = await fetch(url + '&uuid=' + body.uuid + '&token=' + body.token, { headers, signal: ac.signal })
      } catch {
        return
      }
      if (r.status !== 200) return
      const b = (await r.json()) as { messages: Frame[] }
      for (const m of b.messages) inbox.push(m)
    }
  })()
  const session = await inbox.next((f) => f.key === 'session')
  return {
    uuid: body.uuid,
    token: body.token,
    session,
    inbox,
    comments: [],
    send: memberSend(base, path, body.uuid, body.token),
    stop: async () => {
      running = false
      await leave(base, path, body.uuid, body.token).catch(() => {})
      ac.abort()
    }
  }
}
