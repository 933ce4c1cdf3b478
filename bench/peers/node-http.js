// Peer: node:http answering the same JSON as our /healthz (keep-alive, no framework).
import { createServer } from 'node:http'

const BODY = '{"status":"UP"}'
const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY.length })
  res.end(BODY)
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  console.log(`node-http listening on http://127.0.0.1:${server.address().port}`)
})
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
