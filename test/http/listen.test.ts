import t from 'tap'
import { createServer } from 'node:net'
import { startTestPlatform } from '../helpers/platform.js'
import { isPlatformError } from '../../runtime/contracts/index.js'
import { HTTP_ERRORS } from '../../runtime/http/errors.js'
import { loadConfig } from '../../runtime/areas.js'

t.test('a second platform on a port in use fails with "port N is in use"', async (t) => {
  const first = await startTestPlatform()
  t.teardown(first.close)
  const second = startTestPlatform({ 'platform.server.port': first.port })
  await t.rejects(second, {
    code: 'PLT_ERR_LISTEN_FAILED',
    message: `port ${first.port} is in use`,
    params: { socketCode: 'EADDRINUSE', port: first.port }
  })
  const err = await second.catch((e: unknown) => e)
  t.ok(isPlatformError(err, HTTP_ERRORS.LISTEN_FAILED))
  t.equal(isPlatformError(err) && err.def.operator, true, 'an operator error: the CLI prints one line and exits 78')
  t.equal((await fetch(first.url + '/healthz')).status, 200, 'the first keeps serving')
})

t.test('the platform refuses a port held by a foreign non-reusable socket too', async (t) => {
  const holder = createServer()
  await new Promise<void>((resolve) => holder.listen({ host: '127.0.0.1', port: 0, exclusive: true }, resolve))
  t.teardown(() => {
    holder.close()
  })
  const port = (holder.address() as { port: number }).port
  await t.rejects(startTestPlatform({ 'platform.server.port': port }), { message: `port ${port} is in use` })
})

t.test('an address that is not on this host is named', async (t) => {
  // 192.0.2.0/24 is TEST-NET-1: never assigned to a local interface
  await t.rejects(startTestPlatform({ 'platform.server.host': '192.0.2.1' }), {
    code: 'PLT_ERR_LISTEN_FAILED',
    params: { socketCode: 'EADDRNOTAVAIL' },
    message: /cannot listen on 192\.0\.2\.1:0: 192\.0\.2\.1 is not an address of this host/
  })
})

t.test('the default interface is loopback only', async (t) => {
  t.equal(loadConfig({ env: {}, cwd: '/', overrides: {} }).get('platform.server.host'), '127.0.0.1')
})
