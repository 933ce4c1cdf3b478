import t from 'tap'
import { PassThrough } from 'node:stream'
import { startTestPlatform } from '../helpers/platform.js'
import { createLogger } from '../../runtime/observability/index.js'

t.test('healthz, readyz and metrics', async (t) => {
  let pluginsLoaded = false
  let redis: boolean | 'degraded' = true
  const tp = await startTestPlatform(
    {},
    {
      install: (p) => {
        p.addReadiness('plugins', () => pluginsLoaded)
        p.addReadiness('redis', () => redis)
      }
    }
  )
  t.teardown(tp.close)
  t.same(await (await fetch(tp.url + '/healthz')).json(), { status: 'UP' })
  const notReady = await fetch(tp.url + '/readyz')
  t.equal(notReady.status, 503)
  t.same(await notReady.json(), {
    error: 'Not ready',
    code: 'PLT_ERR_NOT_READY',
    status: 'DOWN',
    checks: { store: 'UP', plugins: 'DOWN', redis: 'UP' }
  })
  pluginsLoaded = true
  const ready = await fetch(tp.url + '/readyz')
  t.equal(ready.status, 200)
  t.same(await ready.json(), { status: 'UP', checks: { store: 'UP', plugins: 'UP', redis: 'UP' } })
  // a degraded check leaves the node serving (200): a load balancer must not take it out for it
  redis = 'degraded'
  const degraded = await fetch(tp.url + '/readyz')
  t.equal(degraded.status, 200)
  t.same(await degraded.json(), { status: 'DEGRADED', checks: { store: 'UP', plugins: 'UP', redis: 'DEGRADED' } })
  // a check down still fails readiness, whatever else is degraded
  pluginsLoaded = false
  t.equal((await fetch(tp.url + '/readyz')).status, 503)
  const m = await fetch(tp.url + '/metrics')
  t.match(m.headers.get('content-type'), /text\/plain/)
  const text = await m.text()
  t.match(text, /platform_open_connections\{transport="websocket"\} 0/)
  t.match(text, /nodejs_eventloop_lag_seconds/)
  t.match(text, /platform_http_requests_total\{route="\/readyz",method="GET",status="503"\} 2/)
})

t.test('unmatched requests are counted under one label, not their URL', async (t) => {
  const tp = await startTestPlatform()
  t.teardown(tp.close)
  for (let i = 0; i < 3; i++) await fetch(`${tp.url}/random-${i}`)
  const text = await (await fetch(tp.url + '/metrics')).text()
  t.match(text, /platform_http_requests_total\{route="<unmatched>",method="GET",status="404"\} 3/)
  t.notMatch(text, /random-1/)
})

t.test('logs are JSON lines with ISO time, pretty only when asked or on a TTY', async (t) => {
  const out = new PassThrough()
  let text = ''
  out.on('data', (d) => {
    text += d
  })
  const log = createLogger('info', { destination: out })
  log.info({ a: 1 }, 'hello')
  log.debug('hidden')
  await new Promise((r) => setImmediate(r))
  const line = JSON.parse(text.trim()) as Record<string, unknown>
  t.match(line, { level: 30, msg: 'hello', a: 1, service: 'agent-platform' })
  t.match(line.time, /^\d{4}-\d\d-\d\dT/)
  t.notMatch(text, /hidden/)
})
