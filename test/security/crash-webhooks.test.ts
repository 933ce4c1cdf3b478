// An interaction's webhook after SIGKILL: the platform is killed with acknowledged interactions
// whose webhooks were not yet delivered (the receiver answers 500 until then, with more creates
// in flight); restarted on the same data directory, it delivers every one of them, signed, with
// the final header, under the webhook-id of the attempts before the kill.
import t from 'tap'
import { crashTrial } from './crash-server.js'
import { WEBHOOK_SECRET, startReceiver, verify } from '../helpers/webhook-receiver.js'

t.test('an acknowledged interaction webhook is delivered after SIGKILL and a restart', async (t) => {
  let killed = false
  // before the kill nothing is acknowledged: every delivery of the killed process stays in its outbox
  const receiver = await startReceiver(() => (killed ? 200 : 500))
  t.teardown(receiver.close)
  const url = JSON.stringify(`${receiver.url}/hook`)
  const write = `async (i, call) => {
    const created = await call('POST', '/api/interactions', { message: 'hook ' + i, webhook: { url: ${url} } })
    return created.id
  }`
  const { acked } = await crashTrial(t, write, {
    killAt: 4,
    inFlight: 2,
    config: {
      'platform.interactions.store': 'lmdb',
      'platform.webhooks.secret': WEBHOOK_SECRET,
      'platform.webhooks.retry-base-ms': 20,
      'platform.webhooks.retry-max-ms': 100,
      'platform.webhooks.max-attempts': 1_000_000
    }
  })
  // the restarted platform may meet a last 500 or two: it retries them
  killed = true
  for (const id of acked as string[]) {
    const hook = await receiver.waitFor((r) => r.status === 200 && r.json?.data?.id === id)
    t.equal(hook.json.data.status, 'COMPLETED', `${id}: its final header`)
    t.equal(hook.json.type, 'interaction.completed')
    t.ok(verify(hook), `${id}: signed`)
    const before = receiver.received.filter((r) => r.status === 500 && r.json?.data?.id === id)
    t.ok(
      before.every((r) => r.headers['webhook-id'] === hook.headers['webhook-id']),
      `${id}: the same webhook-id as the attempts before the kill (${before.length})`
    )
  }
})
