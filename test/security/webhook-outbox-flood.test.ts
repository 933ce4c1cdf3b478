// A client flooding the webhook outbox: every webhook it asks for is a delivery the server keeps
// (and retries) until its receiver answers 2xx, so a receiver that never does would make the server
// keep them without bound. The outbox is bounded per principal (429) and in total (503); a refused
// create starts nothing, and interactions without a webhook still run.
import t from 'tap'
import { ALICE, BOB, startInteractions } from '../interactions/helpers.js'
import { WEBHOOK_SECRET, startReceiver } from '../helpers/webhook-receiver.js'

t.test('the outbox is bounded per principal and in total', async (t) => {
  const receiver = await startReceiver(() => 503)
  t.teardown(receiver.close)
  const tp = await startInteractions({
    'platform.webhooks.secret': WEBHOOK_SECRET,
    'platform.webhooks.max-pending-per-principal': 2,
    'platform.webhooks.max-pending': 3,
    // a failed attempt waits ten minutes: every delivery stays in the outbox for the whole test
    'platform.webhooks.retry-base-ms': 600_000
  })
  t.teardown(tp.close)
  const webhook = { url: `${receiver.url}/never-2xx` }
  for (let i = 0; i < 2; i++) t.equal((await tp.api.create({ message: `hook ${i}`, webhook })).status, 200)
  const over = await tp.api.create({ message: 'one too many', webhook })
  t.equal(over.status, 429)
  t.match(over.body, {
    code: 'PLT_ERR_WEBHOOK_OUTBOX_FULL',
    error: /alice: 2 \(platform\.webhooks\.max-pending-per-principal\)/
  })
  t.equal(
    (await tp.api.call('GET', '/api/interactions', { token: ALICE })).body.length,
    2,
    'the refused create started nothing'
  )
  t.equal((await tp.api.create({ message: 'no webhook' })).status, 200, 'a run without a webhook still starts')

  t.equal((await tp.api.create({ message: 'bob 1', webhook }, BOB)).status, 200, 'another principal has room')
  const full = await tp.api.create({ message: 'bob 2', webhook }, BOB)
  t.equal(full.status, 503)
  t.equal(full.body.code, 'PLT_ERR_WEBHOOK_OUTBOX_CAPACITY')
  t.equal((await tp.api.call('GET', '/api/interactions', { token: BOB })).body.length, 1)
})
