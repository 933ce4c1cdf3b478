// Peer: a raw uWebSockets.js hello world answering the same JSON as our /healthz. The ceiling we
// compare our HTTP core against (same uWS build as the platform, no router, no context object).
import uWS from 'uWebSockets.js'

const BODY = '{"status":"UP"}'
const app = uWS.App()
app.get('/*', (res) => {
  res.cork(() => {
    res.writeHeader('content-type', 'application/json')
    res.end(BODY)
  })
})
app.listen('127.0.0.1', 0, (ls) => {
  if (!ls) {
    console.error('uws-raw: cannot listen')
    process.exit(1)
  }
  console.log(`uws-raw listening on http://127.0.0.1:${uWS.us_socket_local_port(ls)}`)
})
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
