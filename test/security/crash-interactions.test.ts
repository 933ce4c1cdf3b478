// Interactions after SIGKILL: every interaction answered 200 (finished, on the LMDB store) is there
// after a restart on the same data directory, with more in flight when the kill lands.
import t from 'tap'
import { crashTrial } from './crash-server.js'

const INTERACTION = `async (i, call) => {
  const created = await call('POST', '/api/interactions', { message: 'hello ' + i })
  return created.id
}`

t.test('an acknowledged interaction survives SIGKILL', async (t) => {
  const config = { 'platform.interactions.store': 'lmdb' }
  await Promise.all(
    [1, 10].map(async (killAt, trial) => {
      const { acked, call } = await crashTrial(t, INTERACTION, { killAt, config })
      for (const id of acked) {
        const got = await call('GET', `/api/interactions/${id}`)
        t.equal(got.status, 200, `trial ${trial}: ${id}`)
        t.equal(got.body.status, 'COMPLETED', `trial ${trial}: ${id} finished`)
      }
    })
  )
})
