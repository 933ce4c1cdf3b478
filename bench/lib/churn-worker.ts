/**
 * Room churn in its own thread: raw sockets that send a WebSocket upgrade to one of `rooms` rooms,
 * wait for the 101 (the server has registered the member by then) and reset it: a join
 * and a leave for the server at a fraction of a WebSocket library's cost. Open loop: connections
 * start on a clock at `rate / 2` per second whatever the server's latency (bounded by `maxInFlight`),
 * so a busy server does not slow the offered churn down. Driven by bench/lib/churn-load.ts.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { connect } from 'node:net'

export interface ChurnInit {
  host: string
  port: number
  /** Request path with `{room}` replaced by the room index. */
  path: string
  rooms: number
  /** Joins+leaves per second offered (each connection is one of each). */
  rate: number
  maxInFlight: number
  /** Joins to make in all, then stop (0: until told to stop). */
  total: number
  sourceAddrs: string[]
}

export type ChurnCommand = { cmd: 'stats' } | { cmd: 'stop' }
export type ChurnEvent = { ev: 'stats'; joined: number; refused: number; failed: number; inFlight: number }

const init = workerData as ChurnInit
const port = parentPort!
const requests = Array.from({ length: init.rooms }, (_, i) =>
  Buffer.from(
    `GET ${init.path.replace('{room}', String(i))} HTTP/1.1\r\nHost: ${init.host}:${init.port}\r\nUpgrade: websocket\r\n` +
      'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'
  )
)
const OK = Buffer.from('HTTP/1.1 101 ')

let started = 0
let joined = 0
let refused = 0
let failed = 0
let inFlight = 0
let next = 0
const t0 = performance.now()

function one(): void {
  const i = next++
  inFlight++
  const socket = connect({
    host: init.host,
    port: init.port,
    localAddress: init.sourceAddrs[i % init.sourceAddrs.length]!,
    noDelay: true
  })
  let settled = false
  const settle = (outcome: 'joined' | 'refused' | 'failed') => {
    if (settled) return
    settled = true
    inFlight--
    if (outcome === 'joined') joined++
    else if (outcome === 'refused') refused++
    else failed++
  }
  socket.on('connect', () => {
    socket.write(requests[i % init.rooms]!)
  })
  socket.on('data', (d: Buffer) => {
    // the status line comes in the first segment on loopback; one check, no buffering
    settle(d.subarray(0, OK.length).equals(OK) ? 'joined' : 'refused')
    // RST, not FIN: a closed connection leaves no TIME_WAIT behind, so thousands of joins a second
    // do not run the ephemeral ports out (connect() slows down long before it fails)
    socket.resetAndDestroy()
  })
  socket.on('error', () => {
    settle('failed')
  })
  socket.on('close', () => {
    settle('failed')
  })
}

// every 2 ms: start what the clock owes, within the in-flight bound; with a total, what the bound
// holds back is started later (the work is fixed), else it is dropped (the rate is what is offered)
const pace = setInterval(() => {
  let owed = Math.floor(((performance.now() - t0) / 1000) * (init.rate / 2)) - started
  if (init.total > 0) owed = Math.min(owed, init.total - started)
  const n = Math.max(0, Math.min(owed, init.maxInFlight - inFlight))
  started += init.total > 0 ? n : owed
  for (let k = 0; k < n; k++) one()
  if (init.total > 0 && started >= init.total) clearInterval(pace)
}, 2)

port.on('message', (m: ChurnCommand) => {
  if (m.cmd === 'stop') clearInterval(pace)
  port.postMessage({ ev: 'stats', joined, refused, failed, inFlight } satisfies ChurnEvent)
})
