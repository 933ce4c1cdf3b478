// Peer: raw uWebSockets.js sending the frames of one agent turn, the floor of a streamed token.
// BENCH_AI_FRAMES_FILE holds one real turn of the platform's agent endpoint, captured by the ai
// scenario (bench/lib/frame-capture.ts): on a WebSocket the frames sent on open and those of the
// turn, over SSE the response headers and the event blocks, each frame a template whose holes
// (`\u0000S`, `\u0000U`) take this session's own ids, so every byte is the platform's but the ids.
// Pacing as the demo runtime's: each frame marked `paced` (a text delta) goes out one event-loop
// turn after the one before (one setImmediate per turn shared by every stream, as the demo
// runtime's); the others follow their predecessor at once. One frame string and one send per
// frame: nothing else is done per token.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import uWS from 'uWebSockets.js'

const captured = JSON.parse(readFileSync(process.env.BENCH_AI_FRAMES_FILE ?? '', 'utf8'))

/** A frame split at its holes: `lits[0] + ids[holes[0]] + lits[1] + …`. */
function compile(t) {
  const parts = t.text.split('\u0000')
  return {
    lits: [parts[0], ...parts.slice(1).map((p) => p.slice(1))],
    holes: parts.slice(1).map((p) => p[0]),
    paced: t.paced
  }
}
const wsOpen = captured.ws.open.map(compile)
const wsTurn = captured.ws.turn.map(compile)
const sseBlocks = captured.sse.blocks.map(compile)
const sseHeaders = captured.sse.headers

function build(f, ids) {
  let s = f.lits[0]
  for (let i = 0; i < f.holes.length; i++) s += ids[f.holes[i]] + f.lits[i + 1]
  return s
}

// the next event-loop turn as the demo runtime waits for it: one Immediate per turn for every
// stream in flight, each stream one frame per turn
let due = []
function nextTurn(step) {
  due.push(step)
  if (due.length === 1)
    setImmediate(() => {
      const now = due
      due = []
      for (const s of now) s()
    })
}

/**
 * Sends frames[from..] through `send` (false once the client is gone): a paced frame waits one
 * event-loop turn, the frames after it that are not paced go in the same turn.
 */
function play(frames, from, ids, send, done) {
  let i = from
  const step = () => {
    do {
      if (!send(build(frames[i], ids))) return
      i++
    } while (i < frames.length && !frames[i].paced)
    if (i < frames.length) nextTurn(step)
    else done()
  }
  if (i >= frames.length) done()
  else if (frames[i].paced) nextTurn(step)
  else step()
}

const app = uWS.App()
app.ws('/*', {
  // as the platform's endpoint: no compression, a large buffer rather than dropped frames
  maxPayloadLength: 1 << 20,
  maxBackpressure: 8 << 20,
  closeOnBackpressureLimit: 0,
  idleTimeout: 120,
  upgrade: (res, req, context) => {
    const ids = { S: randomUUID(), U: randomUUID() }
    res.upgrade(
      { ids, open: true, busy: false },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context
    )
  },
  open: (ws) => {
    const d = ws.getUserData()
    for (const f of wsOpen) ws.send(build(f, d.ids), false)
  },
  message: (ws) => {
    const d = ws.getUserData()
    if (d.busy) return
    d.busy = true
    play(
      wsTurn,
      0,
      d.ids,
      (text) => {
        if (!d.open) return false
        ws.send(text, false)
        return true
      },
      () => {
        d.busy = false
      }
    )
  },
  close: (ws) => {
    ws.getUserData().open = false
  }
})
app.post('/*', (res) => {
  const st = { aborted: false }
  res.onAborted(() => {
    st.aborted = true
  })
  let body = ''
  res.onData((chunk, last) => {
    body += Buffer.from(chunk).toString()
    if (!last) return
    let message
    try {
      message = JSON.parse(body).message
    } catch {
      message = undefined
    }
    if (typeof message !== 'string') {
      res.cork(() => res.writeStatus('400 Bad Request').end())
      return
    }
    const ids = { S: randomUUID(), U: randomUUID() }
    // the headers and the frames before the first paced one in one write, as the platform does
    let from = 0
    res.cork(() => {
      res.writeStatus('200 OK')
      for (const [k, v] of sseHeaders) res.writeHeader(k, v)
      while (from < sseBlocks.length && !sseBlocks[from].paced) res.write(build(sseBlocks[from++], ids))
    })
    play(
      sseBlocks,
      from,
      ids,
      (text) => {
        if (st.aborted) return false
        res.cork(() => res.write(text))
        return true
      },
      () => {
        if (!st.aborted) res.cork(() => res.end())
      }
    )
  })
})
app.listen('127.0.0.1', 0, (ls) => {
  if (!ls) {
    console.error('uws-agent: cannot listen')
    process.exit(1)
  }
  console.log(`uws-agent listening on http://127.0.0.1:${uWS.us_socket_local_port(ls)}`)
})
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
