// Webhooks as a server-side request forgery tool: a client names a URL and the server POSTs to it.
// A host off platform.webhooks.allowed-hosts is refused when the URL is given (every spelling of a
// loopback or metadata address included); a name that is allowed but resolves to a private address
// (DNS rebinding, or a name allowed for its public address) is refused at delivery, and never reached.
import t from 'tap'
import { ALICE, startInteractions } from '../interactions/helpers.js'
import { WEBHOOK_SECRET, startReceiver } from '../helpers/webhook-receiver.js'

t.test('webhook URLs: the allow-list at configuration, the resolved address at delivery', async (t) => {
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  // `localhost` allowed by name only: it resolves to a loopback address nobody listed
  const tp = await startInteractions({
    'platform.webhooks.secret': WEBHOOK_SECRET,
    'platform.webhooks.allowed-hosts': ['localhost'],
    'platform.auth.tokens': [{ token: ALICE, principal: 'alice', roles: ['admin'] }]
  })
  t.teardown(tp.close)

  const refusedAtOnce = [
    `http://127.0.0.1:${receiver.port}/`,
    `http://[::1]:${receiver.port}/`,
    `http://2130706433:${receiver.port}/`,
    `http://0x7f.1:${receiver.port}/`,
    `http://[::ffff:127.0.0.1]:${receiver.port}/`,
    'http://169.254.169.254/latest/meta-data/',
    'http://example.com/hook'
  ]
  for (const url of refusedAtOnce) {
    const r = await tp.api.create({ message: 'x', webhook: { url } })
    t.equal(r.status, 400, url)
    t.equal(r.body.code, 'PLT_ERR_WEBHOOK_HOST_NOT_ALLOWED', url)
  }
  for (const url of ['file:///etc/passwd', 'gopher://localhost/', 'http://user:pw@localhost/', 'localhost/x']) {
    const r = await tp.api.create({ message: 'x', webhook: { url } })
    t.equal(r.body.code, 'PLT_ERR_WEBHOOK_URL_INVALID', url)
  }
  t.equal((await tp.api.call('GET', '/api/interactions', { token: ALICE })).body.length, 0, 'nothing was started')

  const created = await tp.api.create({
    message: 'to localhost',
    webhook: { url: `http://localhost:${receiver.port}/` }
  })
  t.equal(created.status, 200, 'the name is on the list')
  let failure: any
  while (failure === undefined) {
    const view = await tp.api.call('GET', '/api/admin/webhooks', { token: ALICE })
    failure = view.body.failures.find((f: any) => f.ref === created.body.id)
    if (failure === undefined) await new Promise((r) => setTimeout(r, 10))
  }
  t.match(failure.lastAttempt.error, /resolves to .+, a private address not on platform\.webhooks\.allowed-hosts/)
  t.equal(failure.attempts, 1, 'refused for good, not retried')
  t.equal(receiver.received.length, 0, 'the receiver was never reached')
})
