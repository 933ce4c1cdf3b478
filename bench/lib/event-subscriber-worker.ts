/**
 * Subscribers of a seq-numbered event stream (the admin stream) in their own thread: raw RFC 6455
 * clients that read every frame as fast as it comes and parse nothing but the frame headers and
 * the last `"seq":` of each frame (how far the stream reached), so the server is measured with
 * readers that keep up, not with the load generator's own backlog. Driven by event-subscribers.ts.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { connect, type Socket } from 'node:net'

export interface SubscriberInit {
  host: string
  port: number
  path: string
  count: number
}

export type SubscriberCommand = { cmd: 'stats' } | { cmd: 'close' }
export type SubscriberEvent =
  | { ev: 'open'; ok: number; error?: string }
  | { ev: 'stats'; events: number; frames: number; bytes: number; closed: number }
  | { ev: 'closed' }

const init = workerData as SubscriberInit
const port = parentPort!
const SEQ = Buffer.from('"seq":')
const PONG = Buffer.from([0x8a, 0x80, 0, 0, 0, 0])

let events = 0
let frames = 0
let bytes = 0
let closed = 0
let opened = 0
let settled = 0
let firstError: string | undefined
const sockets: Socket[] = []

function lastSeq(payload: Buffer): number {
  const at = payload.lastIndexOf(SEQ)
  if (at < 0) return -1
  let n = 0
  for (let i = at + SEQ.length; i < payload.length; i++) {
    const d = payload[i]! - 48
    if (d < 0 || d > 9) break
    n = n * 10 + d
  }
  return n
}

function open(): void {
  const socket = connect({ host: init.host, port: init.port, noDelay: true })
  sockets.push(socket)
  let buf: Buffer | undefined
  let upgraded = false
  let done = false
  // the first frame is the replay window: count from its last seq on
  let last = -1
  const settle = (err?: string) => {
    if (done) return
    done = true
    if (err === undefined) opened++
    else firstError ??= err
    if (++settled === init.count)
      port.postMessage({
        ev: 'open',
        ok: opened,
        ...(firstError !== undefined ? { error: firstError } : {})
      } satisfies SubscriberEvent)
  }
  socket.on('connect', () => {
    socket.write(
      `GET ${init.path} HTTP/1.1\r\nHost: ${init.host}:${init.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'
    )
  })
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length
    let b = buf === undefined ? chunk : Buffer.concat([buf, chunk])
    if (!upgraded) {
      const end = b.indexOf('\r\n\r\n')
      if (end < 0) {
        buf = b
        return
      }
      if (b.toString('latin1', 0, 13) !== 'HTTP/1.1 101 ') {
        settle(b.toString('latin1', 0, Math.min(end, 120)).split('\r\n')[0])
        socket.destroy()
        return
      }
      upgraded = true
      settle()
      b = b.subarray(end + 4)
    }
    let off = 0
    while (b.length - off >= 2) {
      let len = b[off + 1]! & 0x7f
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
      if (b.length - off < h + len) break
      const opcode = b[off]! & 0x0f
      if (opcode === 9) socket.write(PONG)
      else if (opcode === 1) {
        frames++
        const seq = lastSeq(b.subarray(off + h, off + h + len))
        if (seq >= 0) {
          if (last >= 0) events += seq - last
          last = seq
        }
      }
      off += h + len
    }
    buf = off === b.length ? undefined : Buffer.from(b.subarray(off))
  })
  socket.on('error', (err) => {
    settle(err.message)
  })
  socket.on('close', () => {
    if (upgraded) closed++
    settle('closed before upgrade')
  })
}

for (let i = 0; i < init.count; i++) open()

port.on('message', (m: SubscriberCommand) => {
  if (m.cmd === 'stats') {
    port.postMessage({ ev: 'stats', events, frames, bytes, closed } satisfies SubscriberEvent)
    return
  }
  for (const s of sockets) s.destroy()
  port.postMessage({ ev: 'closed' } satisfies SubscriberEvent)
})
