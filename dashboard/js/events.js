// The admin event stream (/platform/admin/events) over WebSocket: resumes after the last seq of
// each node on reconnect (a cluster's nodes each number their own events, and any node takes the
// cursor `node:seq,node:seq`) and hands events to listeners in one batch per animation frame, so a burst of
// thousands of events costs one DOM update per frame.
import { token } from './api.js'

export class EventStream {
  constructor() {
    this.listeners = new Set()
    this.statusListeners = new Set()
    this.queue = []
    this.scheduled = false
    // per node, the last seq seen
    this.cursor = new Map()
    this.ws = undefined
    this.closed = false
  }

  onBatch(fn) {
    this.listeners.add(fn)
  }

  onStatus(fn) {
    this.statusListeners.add(fn)
  }

  status(state, detail = '') {
    for (const fn of this.statusListeners) fn(state, detail)
  }

  connect() {
    this.closed = false
    const q = new URLSearchParams()
    const t = token()
    if (t !== '') q.set('access_token', t)
    if (this.cursor.size > 0) q.set('after', [...this.cursor].map(([node, seq]) => `${node}:${seq}`).join(','))
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:'
    const ws = new WebSocket(`${proto}//${location.host}/platform/admin/events?${q}`)
    this.ws = ws
    this.status('connecting')
    let opened = false
    ws.onopen = () => {
      opened = true
      this.status('live')
    }
    ws.onmessage = (m) => {
      let data
      try {
        data = JSON.parse(m.data)
      } catch {
        return
      }
      const events = Array.isArray(data) ? data : [data]
      for (const e of events) {
        if (typeof e.seq === 'number' && typeof e.node === 'string') this.cursor.set(e.node, e.seq)
        this.queue.push(e)
      }
      this.schedule()
    }
    ws.onclose = (c) => {
      if (this.ws !== ws || this.closed) return
      // 1008 is a refusal (auth or too slow): say so; anything else is retried quietly
      // a refused upgrade (401) reaches the page only as 1006 before open: say what usually causes it
      const why =
        c.code === 1008
          ? `refused: ${c.reason || 'policy'}`
          : !opened
            ? token() === ''
              ? 'refused: the event stream needs a token'
              : 'refused: is the token valid?'
            : `closed (${c.code}), reconnecting`
      this.status('down', why)
      setTimeout(() => {
        if (!this.closed && this.ws === ws) this.connect()
      }, 2000)
    }
  }

  reconnect() {
    this.close()
    this.connect()
  }

  close() {
    this.closed = true
    const ws = this.ws
    this.ws = undefined
    if (ws !== undefined) ws.close()
  }

  schedule() {
    if (this.scheduled) return
    this.scheduled = true
    // a hidden tab gets no animation frames: the timer flushes there instead, so the queue stays bounded
    const flush = () => {
      if (!this.scheduled) return
      this.scheduled = false
      cancelAnimationFrame(frame)
      clearTimeout(timer)
      const batch = this.queue
      this.queue = []
      for (const fn of this.listeners) fn(batch)
    }
    const frame = requestAnimationFrame(flush)
    const timer = setTimeout(flush, 1000)
  }
}
