// Peer: the floor of a stream replay. The same steps under the same [id, seq] keys in a raw lmdb-js
// database; a WebSocket connection gets them in one getRange, one frame each in our wire shape,
// then the terminal frame, and is closed: no access check, no feed, no flow control.
// REPLAY_FILE: JSON {id, steps, terminal}; REPLAY_DIR: where the LMDB environment goes.
import { readFileSync } from 'node:fs'
import { open } from 'lmdb'
import uWS from 'uWebSockets.js'

const { id, steps, terminal } = JSON.parse(readFileSync(process.env.REPLAY_FILE, 'utf8'))
const db = open({ path: process.env.REPLAY_DIR })
await db.transaction(() => {
  for (const s of steps) db.put([id, s.seq], s)
})
const end = JSON.stringify(terminal)

uWS
  .App()
  .ws('/*', {
    maxBackpressure: 64 * 1024 * 1024,
    open: (ws) => {
      ws.cork(() => {
        for (const { value } of db.getRange({ start: [id, 0], end: [id, Infinity] }))
          ws.send(`{"type":"interaction-step","step":${JSON.stringify(value)}}`, false)
        ws.send(end, false)
      })
      ws.end(1000, 'interaction ended')
    }
  })
  .listen('127.0.0.1', 0, (ls) => {
    if (!ls) {
      console.error('replay-lmdb: cannot listen')
      process.exit(1)
    }
    console.log(`replay-lmdb listening on http://127.0.0.1:${uWS.us_socket_local_port(ls)}`)
  })
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
