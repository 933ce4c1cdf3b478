/**
 * A WebSocket load worker: many raw RFC 6455 client connections in one thread, bound to several
 * 127.0.0.x source addresses so large counts do not run out of ephemeral ports. The client does
 * the least work it can (zero masking key, no UTF-8 validation, frames scanned for a marker) so
 * that it, not the server, stays cheap. Driven by bench/lib/ws-load.ts over postMessage.
 *
 * Bench frames carry `"bt":<send time, µs since epoch>,"bs":<sequence>`; whatever envelope the
 * server wraps them in, the receiver finds the marker in the bytes.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { connect, type Socket } from 'node:net'
import { HIST_BUCKETS, histIndex } from './stats.js'

export type WorkerCommand =
  | { cmd: 'connect'; count: number; concurrency: number }
  | { cmd: 'arm'; seq: number }
  | { cmd: 'send'; count: number; seqStart: number; pad: number }
  | { cmd: 'stats'; reset: boolean }
  | { cmd: 'close' }

export type WorkerEvent =
  | { ev: 'connected'; ok: number; failed: number; error?: string }
  | { ev: 'reached'; seq: number }
  | { ev: 'stats'; deliveries: number; otherFrames: number; closed: number; hist: Uint32Array }
  | { ev: 'closed' }

interface Init {
  host: string
  port: number
  /** Request path; `{group}` is replaced by floor(connection index / groupSize) (one room per group). */
  path: string
  groupSize: number
  /** Index of this worker's first connection among all workers' connections. */
  offset: number
  sourceAddrs: string[]
  /** true in the worker whose first connection sends */
  sender: boolean
}

const init = workerData as Init
const port = parentPort!
const MARK_A = Buffer.from('bt":')
const MARK_B = Buffer.from('bt\\":')
const handshake = (i: number) =>
  Buffer.from(
    `GET ${init.path.replace('{group}', String(Math.floor((init.offset + i) / init.groupSize)))} HTTP/1.1\r\nHost: ${init.host}:${init.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'
  )
const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000)

class Conn {
  buf: Buffer | undefined
  upgraded = false
  /** connect outcome reported (once) */
  settled = false
  lastSeq = -1
  open = true
  constructor(
    readonly socket: Socket,
    readonly counted: boolean
  ) {}
}

const conns: Conn[] = []
let deliveries = 0
let otherFrames = 0
let closedCount = 0
let hist = new Uint32Array(HIST_BUCKETS)
let target = -1
let reached = 0
let countedConns = 0

function onFrame(c: Conn, opcode: number, payload: Buffer): void {
  if (opcode === 9) {
    // ping → pong with the same payload
    c.socket.write(frame(0x8a, payload))
    return
  }
  if (opcode === 8) {
    c.open = false
    c.socket.end()
    return
  }
  if (opcode !== 1 && opcode !== 2 && opcode !== 0) return
  let i = payload.indexOf(MARK_A)
  let skip = MARK_A.length
  if (i < 0) {
    i = payload.indexOf(MARK_B)
    skip = MARK_B.length
  }
  if (i < 0) {
    otherFrames++
    return
  }
  const bt = readInt(payload, i + skip)
  const si = payload.indexOf('bs', i + skip)
  const seq = si < 0 ? -1 : readInt(payload, si + 4 + (payload[si + 2] === 0x5c ? 1 : 0))
  if (!c.counted) return
  deliveries++
  hist[histIndex(nowUs() - bt)]!++
  if (seq > c.lastSeq) {
    if (c.lastSeq < target && seq >= target) {
      if (++reached === countedConns) port.postMessage({ ev: 'reached', seq: target } satisfies WorkerEvent)
    }
    c.lastSeq = seq
  }
}

function readInt(b: Buffer, at: number): number {
  let n = 0
  for (let i = at; i < b.length; i++) {
    const d = b[i]! - 48
    if (d < 0 || d > 9) break
    n = n * 10 + d
  }
  return n
}

/** Parses whole frames out of the connection's buffer (server frames are unmasked). */
function onData(c: Conn, chunk: Buffer): void {
  let b = c.buf === undefined ? chunk : Buffer.concat([c.buf, chunk])
  if (!c.upgraded) {
    const end = b.indexOf('\r\n\r\n')
    if (end < 0) {
      c.buf = b
      return
    }
    if (b.toString('latin1', 0, 13) !== 'HTTP/1.1 101 ') {
      c.buf = b
      failedOne(c, new Error(`upgrade refused: ${b.toString('latin1', 0, Math.min(end, 120)).split('\r\n')[0]}`))
      c.socket.destroy()
      return
    }
    c.upgraded = true
    b = b.subarray(end + 4)
    connectedOne(c)
  }
  let off = 0
  while (b.length - off >= 2) {
    const b0 = b[off]!,
      b1 = b[off + 1]!
    let len = b1 & 0x7f
    let h = 2
    if (len === 126) {
      if (b.length - off < 4) break
      len = b.readUInt16BE(off + 2)
      h = 4
    } else if (len === 127) {
      if (b.length - off < 10) break
      len = Number(b.readBigUInt64BE(off + 2))
      h = 10
    }
    if (b1 & 0x80) h += 4 // a masked server frame is a protocol error, but skip the key rather than crash
    if (b.length - off < h + len) break
    onFrame(c, b0 & 0x0f, b.subarray(off + h, off + h + len))
    off += h + len
  }
  c.buf = off === b.length ? undefined : Buffer.from(b.subarray(off))
}

/** A masked client frame with a zero masking key (XOR with zeros: the payload goes as is). */
function frame(first: number, payload: Buffer): Buffer {
  const len = payload.length
  const h = len < 126 ? 6 : len < 65536 ? 8 : 14
  const out = Buffer.allocUnsafe(h + len)
  out[0] = first
  if (len < 126) out[1] = 0x80 | len
  else if (len < 65536) {
    out[1] = 0x80 | 126
    out.writeUInt16BE(len, 2)
  } else {
    out[1] = 0x80 | 127
    out.writeBigUInt64BE(BigInt(len), 2)
  }
  out.writeUInt32BE(0, h - 4)
  payload.copy(out, h)
  return out
}

let pendingConnect:
  { want: number; ok: number; failed: number; error?: string; started: number; concurrency: number } | undefined

function connectedOne(c: Conn): void {
  if (c.settled) return
  c.settled = true
  const p = pendingConnect
  if (p === undefined) return
  p.ok++
  progress()
}

function failedOne(c: Conn, err: Error): void {
  if (c.settled) return
  c.settled = true
  const p = pendingConnect
  if (p === undefined) return
  p.failed++
  p.error ??= err.message
  progress()
}

function progress(): void {
  const p = pendingConnect!
  const settled = p.ok + p.failed
  if (settled === p.want) {
    pendingConnect = undefined
    port.postMessage({
      ev: 'connected',
      ok: p.ok,
      failed: p.failed,
      ...(p.error !== undefined ? { error: p.error } : {})
    } satisfies WorkerEvent)
    return
  }
  while (p.started < p.want && p.started - settled < p.concurrency) openOne(p.started++)
}

function openOne(i: number): void {
  const localAddress = init.sourceAddrs[i % init.sourceAddrs.length]!
  const counted = !(init.sender && conns.length === 0)
  const socket = connect({ host: init.host, port: init.port, localAddress, noDelay: true })
  const c = new Conn(socket, counted)
  conns.push(c)
  if (counted) countedConns++
  socket.on('connect', () => {
    socket.write(handshake(i))
  })
  socket.on('data', (d: Buffer) => {
    onData(c, d)
  })
  socket.on('error', (err) => {
    failedOne(c, err)
  })
  socket.on('close', () => {
    if (c.open && c.upgraded) closedCount++
    c.open = false
    failedOne(c, new Error('closed before upgrade'))
  })
}

port.on('message', (m: WorkerCommand) => {
  switch (m.cmd) {
    case 'connect':
      pendingConnect = { want: m.count, ok: 0, failed: 0, started: 0, concurrency: m.concurrency }
      if (m.count === 0) {
        pendingConnect = undefined
        port.postMessage({ ev: 'connected', ok: 0, failed: 0 } satisfies WorkerEvent)
        return
      }
      progress()
      return
    case 'arm': {
      target = m.seq
      reached = 0
      for (const c of conns) if (c.counted && c.lastSeq >= target) reached++
      if (reached === countedConns) port.postMessage({ ev: 'reached', seq: target } satisfies WorkerEvent)
      return
    }
    case 'send': {
      const sender = conns[0]
      if (sender === undefined || !init.sender) return
      const pad = 'x'.repeat(m.pad)
      const parts: Buffer[] = []
      for (let k = 0; k < m.count; k++)
        parts.push(frame(0x81, Buffer.from(`{"bt":${nowUs()},"bs":${m.seqStart + k},"p":"${pad}"}`)))
      sender.socket.write(parts.length === 1 ? parts[0]! : Buffer.concat(parts))
      return
    }
    case 'stats': {
      const h = hist
      port.postMessage({ ev: 'stats', deliveries, otherFrames, closed: closedCount, hist: h } satisfies WorkerEvent)
      if (m.reset) {
        deliveries = 0
        otherFrames = 0
        hist = new Uint32Array(HIST_BUCKETS)
      }
      return
    }
    case 'close':
      for (const c of conns) {
        c.open = false
        c.socket.destroy()
      }
      conns.length = 0
      port.postMessage({ ev: 'closed' } satisfies WorkerEvent)
  }
})
