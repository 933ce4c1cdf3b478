// Interactions and their governance decisions after SIGKILL: every interaction answered 200
// (finished, on the LMDB store) is there after a restart on the same data directory, with its
// decisions, with more in flight when the kill lands.
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
      const missing = []
      for (const id of acked) {
        const got = await call('GET', `/api/interactions/${id}`)
        if (got.status !== 200 || got.body.status !== 'COMPLETED') missing.push(id)
      }
      t.same(missing, [], `trial ${trial}: every acknowledged interaction is there, finished`)
    })
  )
})

// the kill switch (installed disarmed by the crash tests' config) evaluates every turn, so each
// acknowledged turn has its decisions, the message in their context snapshot
const TURN = `async (i, call) => {
  await call('POST', '/api/interactions', { message: 'turn ' + i })
  return 'turn ' + i
}`

t.test("an acknowledged turn's governance decisions survive SIGKILL", async (t) => {
  await Promise.all(
    [1, 10].map(async (killAt, trial) => {
      const { acked, call } = await crashTrial(t, TURN, { killAt })
      const decisions = await call('GET', '/api/admin/governance/decisions?limit=10000')
      const seen = new Set(
        (decisions.body as { context_snapshot: { message: string; phase: string } }[])
          .filter((d) => d.context_snapshot.phase === 'post_response')
          .map((d) => d.context_snapshot.message)
      )
      t.same(
        acked.filter((m) => !seen.has(m as string)),
        [],
        `trial ${trial}: every acknowledged turn's post-response decision is kept`
      )
    })
  )
})
