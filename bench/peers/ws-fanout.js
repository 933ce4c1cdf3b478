// Peer: a `ws` server doing the room fan-out of /platform/rooms/{room}: what one member sends is
// sent to every member of the room (the frame serialised once, one send() per member), joins and
// leaves are announced to the room (not with FANOUT_ANNOUNCE=0, as the room-broadcast scenario runs
// it: our members join with presence=false). Idle-connection memory is measured on the same server.
import { createServer } from 'node:http'
import { WebSocketServer } from 'ws'

const rooms = new Map()
const server = createServer((req, res) => {
  res.writeHead(404)
  res.end()
})
const wss = new WebSocketServer({ server, perMessageDeflate: false, clientTracking: false })

function announce(room, type) {
  const frame = JSON.stringify({ type, members: room.size })
  for (const c of room) c.send(frame)
}

wss.on('connection', (ws, req) => {
  const m = /^\/platform\/rooms\/([^/?]+)/.exec(req.url ?? '')
  if (m === null) {
    ws.close(1008, 'unknown path')
    return
  }
  const name = m[1]
  let room = rooms.get(name)
  if (room === undefined) {
    room = new Set()
    rooms.set(name, room)
  }
  room.add(ws)
  if (process.env.FANOUT_ANNOUNCE !== '0') announce(room, 'join')
  ws.on('message', (data, isBinary) => {
    if (isBinary) return
    // one serialisation per broadcast, like the platform: the member's JSON in an envelope
    const frame = `{"type":"message","data":${data.toString()}}`
    for (const c of room) c.send(frame)
  })
  ws.on('close', () => {
    room.delete(ws)
    if (room.size === 0) rooms.delete(name)
    else if (process.env.FANOUT_ANNOUNCE !== '0') announce(room, 'leave')
  })
  ws.on('error', () => {})
})
server.listen(0, '127.0.0.1', () => {
  console.log(`ws-fanout listening on http://127.0.0.1:${server.address().port}`)
})
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
