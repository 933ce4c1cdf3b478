/**
 * One real turn of the agent endpoint, captured as the raw uWebSockets.js peer
 * (bench/peers/uws-agent.js) replays it: every frame as the platform wrote it, the session's own
 * ids cut out as holes, so the peer sends the same bytes (the same `sessionId` and `seq` fields)
 * with ids of its own.
 */
import { request } from 'node:http'
import WebSocket from 'ws'

/** A frame whose holes `\u0000S` (the session id) and `\u0000U` (the member uuid) take a session's ids. */
export interface FrameTemplate {
  text: string
  /** A text delta: sent one event-loop turn after the frame before it, as the demo runtime yields. */
  paced: boolean
}

export interface CapturedTurn {
  /** `open`: the frames a connection gets before it says anything; `turn`: those of one prompt. */
  ws: { open: FrameTemplate[]; turn: FrameTemplate[] }
  /** The response headers uWS does not write itself, and every event block (comments included). */
  sse: { headers: [string, string][]; blocks: FrameTemplate[] }
}

const WS_DELTA = '{"event":"text-delta",'
const SSE_DELTA = 'data: ' + WS_DELTA
// written by uWS itself (or the framing), not by the endpoint
const UWS_HEADERS = new Set(['date', 'uwebsockets', 'content-length', 'transfer-encoding', 'connection'])

function holes(text: string, sessionId: string, uuid: string | undefined, paced: boolean): FrameTemplate {
  let t = text.split(sessionId).join('\u0000S')
  if (uuid !== undefined) t = t.split(uuid).join('\u0000U')
  return { text: t, paced }
}

/** The ids a frame of the session carries: its `sessionId`, and the member `uuid` of a session frame. */
function idsOf(frame: string): { sessionId: string; uuid?: string } {
  const f = JSON.parse(frame) as { sessionId?: unknown; value?: { uuid?: unknown } }
  if (typeof f.sessionId !== 'string' || f.sessionId.length < 8)
    throw new Error(`captured frame without a sessionId: ${frame.slice(0, 120)}`)
  return typeof f.value?.uuid === 'string' ? { sessionId: f.sessionId, uuid: f.value.uuid } : { sessionId: f.sessionId }
}

/** One WebSocket turn: the frames before the prompt (the session frame), then the turn's until `complete`. */
function wsFrames(url: string, message: string): Promise<{ open: string[]; turn: string[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false })
    const open: string[] = []
    const turn: string[] = []
    let asked = false
    const timer = setTimeout(() => {
      ws.terminate()
      reject(new Error('frame capture: no complete frame within 30 s'))
    }, 30000)
    ws.on('message', (data: Buffer) => {
      const text = data.toString()
      if (!asked) {
        open.push(text)
        asked = true
        ws.send(message)
        return
      }
      turn.push(text)
      if (text.startsWith('{"event":"complete"') || text.startsWith('{"event":"error"')) {
        clearTimeout(timer)
        ws.close()
        if (text.startsWith('{"event":"error"')) reject(new Error(`frame capture: ${text.slice(0, 200)}`))
        else resolve({ open, turn })
      }
    })
    ws.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
  })
}

/** One SSE POST: the headers and the whole body. */
function sseBody(url: string, message: string): Promise<{ headers: [string, string][]; body: string }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ message })
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          reject(new Error(`frame capture: HTTP ${res.statusCode}`))
          return
        }
        const headers: [string, string][] = []
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          if (!UWS_HEADERS.has(res.rawHeaders[i]!.toLowerCase()))
            headers.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!])
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => {
          text += d
        })
        res.on('end', () => resolve({ headers, body: text }))
        res.on('error', reject)
      }
    )
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * Captures one turn of `message` on the agent endpoint at `httpUrl` (`http://…/platform/agent/x`)
 * over a WebSocket and over an SSE POST; fails unless each reply has `tokens` text deltas.
 */
export async function captureTurn(httpUrl: string, message: string, tokens: number): Promise<CapturedTurn> {
  const w = await wsFrames(httpUrl.replace(/^http/, 'ws'), message)
  const wsIds = idsOf(w.open[0]!)
  const s = await sseBody(httpUrl, message)
  const blocks = s.body
    .split('\n\n')
    .slice(0, -1)
    .map((b) => b + '\n\n')
  if (blocks.join('') !== s.body) throw new Error('frame capture: the SSE body does not end with a whole event')
  const first = blocks.find((b) => b.startsWith('data: {'))
  if (first === undefined) throw new Error('frame capture: no SSE data event')
  const sseIds = idsOf(first.slice('data: '.length, -2))
  const captured: CapturedTurn = {
    ws: {
      open: w.open.map((f) => holes(f, wsIds.sessionId, wsIds.uuid, false)),
      turn: w.turn.map((f) => holes(f, wsIds.sessionId, wsIds.uuid, f.startsWith(WS_DELTA)))
    },
    sse: {
      headers: s.headers,
      blocks: blocks.map((b) => holes(b, sseIds.sessionId, undefined, b.startsWith(SSE_DELTA)))
    }
  }
  const wsDeltas = captured.ws.turn.filter((f) => f.paced).length
  const sseDeltas = captured.sse.blocks.filter((f) => f.paced).length
  if (wsDeltas !== tokens || sseDeltas !== tokens)
    throw new Error(`frame capture: ${wsDeltas} WebSocket and ${sseDeltas} SSE text deltas, not ${tokens}`)
  return captured
}
