import WebSocket from 'ws'
import type { Platform } from '../../runtime/platform.js'
import { transportOf } from '../../runtime/transport/index.js'
import { roomBroadcasterId } from '../../runtime/transport/rooms.js'

export type Frame = Record<string, any>

/** Frames received so far; `next` takes the first one matching (waiting for it if needed). */
export class Inbox {
  readonly all: Frame[] = []
  private pending: Frame[] = []
  private waiters: { pred: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = []

  push(f: Frame): void {
    this.all.push(f)
    const i = this.waiters.findIndex((w) => w.pred(f))
    if (i >= 0) {
      this.waiters.splice(i, 1)[0]!.resolve(f)
      return
    }
    this.pending.push(f)
  }

  next(pred: (f: Frame) => boolean = () => true, ms = 8000): Promise<Frame> {
    const i = this.pending.findIndex(pred)
    if (i >= 0) return Promise.resolve(this.pending.splice(i, 1)[0]!)
    return new Promise((resolve, reject) => {
      const w = {
        pred,
        resolve: (f: Frame) => {
          clearTimeout(timer)
          resolve(f)
        }
      }
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1)
        reject(new Error('no matching frame within ' + ms + ' ms; got ' + JSON.stringify(this.all).slice(0, 800)))
      }, ms)
      this.waiters.push(w)
    })
  }

  type(type: string, extra: (f: Frame) => boolean = () => true, ms?: number): Promise<Frame> {
    return this.next((f) => f.type === type && extra(f), ms)
  }
}

export interface WsMember {
  ws: WebSocket
  uuid: string
  joined: Frame
  inbox: Inbox
  closed: Promise<{ code: number; reason: string }>
}

export function wsUrl(base: string, path: string): string {
  return base.replace(/^http/, 'ws') + path
}

/**
 * A WebSocket whose frames land in an inbox, parsed as JSON (or `{raw}` when they are not), and
 * whose close resolves `closed`; an error surfaces as that close.
 */
export function jsonSocket(
  url: string,
  headers: Record<string, string> = {}
): { ws: WebSocket; inbox: Inbox; closed: Promise<{ code: number; reason: string }> } {
  const ws = new WebSocket(url, { headers })
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
  return { ws, inbox, closed }
}

/** Opens a WebSocket and resolves once the `joined` frame (or, for non-room paths, `open`) arrived. */
export async function wsMember(
  base: string,
  room: string,
  query = '',
  headers: Record<string, string> = {}
): Promise<WsMember> {
  const { ws, inbox, closed } = jsonSocket(wsUrl(base, '/platform/rooms/' + room + query), headers)
  const joined = await inbox.type('joined')
  return { ws, uuid: joined.uuid, joined, inbox, closed }
}

export interface SseMember {
  uuid: string
  /** The member's secret from its `joined` frame: needed to POST or DELETE as it. */
  token: string
  joined: Frame
  inbox: Inbox
  /** Comment lines received (`: heartbeat`). */
  comments: string[]
  /** Resolves when the server ends the stream. */
  ended: Promise<void>
  abort: () => void
}

/** Opens an SSE stream with fetch and parses `data:` events as JSON. */
export async function sseMember(
  base: string,
  room: string,
  query = '',
  headers: Record<string, string> = {}
): Promise<SseMember> {
  const ac = new AbortController()
  const res = await fetch(base + '/platform/rooms/' + room + query, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: ac.signal
  })
  if (res.status !== 200) throw new Error('SSE status ' + res.status + ' ' + (await res.text()))
  const inbox = new Inbox()
  const comments: string[] = []
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  const ended = (async () => {
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
          for (const l of block.split('\n')) if (l.startsWith(':')) comments.push(l.slice(1).trim())
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n')
          if (data !== '') {
            try {
              inbox.push(JSON.parse(data))
            } catch {
              inbox.push({ raw: data })
            }
          }
        }
      }
    } catch {
      /* aborted */
    }
  })()
  const joined = await inbox.type('joined')
  return {
    uuid: joined.uuid,
    token: joined.token,
    joined,
    inbox,
    comments,
    ended,
    abort: () => {
      ac.abort()
    }
  }
}

export interface LpMember {
  uuid: string
  /** The member's secret from its join answer: needed to poll, POST or DELETE as it. */
  token: string
  joined: Frame
  inbox: Inbox
  /** Statuses of polls that did not answer 200 (the loop stops at the first). */
  stopped: Promise<number>
  stop: () => void
}

/**
 * Joins over long-polling and keeps one poll open at a time, pushing every message to the inbox.
 * `query` (`&name=value...`) and `headers` go with the join and every poll.
 */
export async function lpMember(
  base: string,
  room: string,
  query = '',
  headers: Record<string, string> = {}
): Promise<LpMember> {
  const url = base + '/platform/rooms/' + room + '?transport=long-polling' + query
  const first = await fetch(url, { headers })
  if (first.status !== 200) throw new Error('long-polling join ' + first.status)
  const body = (await first.json()) as { uuid: string; token: string; messages: Frame[] }
  const inbox = new Inbox()
  for (const m of body.messages) inbox.push(m)
  const ac = new AbortController()
  let running = true
  const stopped = (async () => {
    while (running) {
      let r: Response
      try {
        r = await fetch(url + '&uuid=' + body.uuid + '&token=' + body.token, { headers, signal: ac.signal })
      } catch {
        return -1
      }
      if (r.status !== 200) return r.status
      const b = (await r.json()) as { messages: Frame[] }
      for (const m of b.messages) inbox.push(m)
      if (b.messages.some((m) => m.type === 'disconnected')) return 200
    }
    return 0
  })()
  const joined = await inbox.type('joined')
  return {
    uuid: body.uuid,
    token: body.token,
    joined,
    inbox,
    stopped,
    stop: () => {
      running = false
      ac.abort()
    }
  }
}

/** POSTs a JSON frame to the room as `uuid`, proven by `token` (none: no token header). */
export async function say(base: string, room: string, uuid: string, data: unknown, token?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-platform-resource': uuid }
  if (token !== undefined) headers['x-platform-token'] = token
  return await fetch(base + '/platform/rooms/' + room, { method: 'POST', headers, body: JSON.stringify(data) })
}

/** DELETEs `uuid` from the room (leaves), proven by `token` (none: no token header). */
export async function leave(base: string, room: string, uuid: string, token?: string): Promise<Response> {
  const headers: Record<string, string> = { 'x-platform-resource': uuid }
  if (token !== undefined) headers['x-platform-token'] = token
  return await fetch(base + '/platform/rooms/' + room, { method: 'DELETE', headers })
}

/**
 * Tries a WebSocket upgrade that the server should refuse; resolves with the HTTP status and
 * JSON body of the refusal, or rejects when the socket opened instead.
 */
export function refusedUpgrade(
  url: string,
  headers: Record<string, string> = {}
): Promise<{ status: number; body: Frame }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers })
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString()
        let body: Frame
        try {
          body = JSON.parse(text) as Frame
        } catch {
          body = { raw: text }
        }
        resolve({ status: res.statusCode ?? 0, body })
      })
    })
    ws.on('open', () => {
      ws.terminate()
      reject(new Error('the upgrade was accepted'))
    })
    ws.on('error', () => {
      /* the unexpected response settles it */
    })
  })
}

/**
 * An SSE member of `room` that never reads its body (TCP fills, its queue grows), flooded with
 * 16 KB broadcasts until the server disconnects it or 5 000 were sent; `abort()` ends the request.
 */
export async function floodStalledSse(
  platform: Platform,
  base: string,
  room: string
): Promise<{ uuid: string; reason: string; sent: number; abort: () => void }> {
  const connected = new Promise<string>((resolve) => {
    const off = platform.bus.on('ResourceConnected', (e) => {
      if (e.transport === 'SSE') {
        off()
        resolve(e.uuid)
      }
    })
  })
  const ac = new AbortController()
  const res = await fetch(`${base}/platform/rooms/${room}`, {
    headers: { accept: 'text/event-stream' },
    signal: ac.signal
  })
  if (res.status !== 200) throw new Error(`SSE member of ${room}: HTTP ${res.status}`)
  const uuid = await connected
  let reason = ''
  const off = platform.bus.on('ResourceDisconnected', (e) => {
    if (e.uuid === uuid) reason = e.reason
  })
  const tr = transportOf(platform)
  const payload = { blob: 'z'.repeat(16 * 1024) }
  let sent = 0
  while (reason === '' && sent < 5000) {
    tr.broadcast(roomBroadcasterId(room), payload)
    sent++
    await new Promise((r) => setImmediate(r))
  }
  off()
  return { uuid, reason, sent, abort: () => ac.abort() }
}
