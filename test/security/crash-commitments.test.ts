// Commitment records after SIGKILL: a coordinator turn answered 200 (an interaction with the
// bundled demo-fleet's `panel`, which dispatches to two agents) keeps its signed records after a
// restart on the same data directory, with more turns in flight when the kill lands.
import t from 'tap'
import { PLUGINS, crashTrial } from './crash-server.js'

const TURN = `async (i, call) => {
  await call('POST', '/api/interactions', { agentId: 'panel', message: 'question ' + i })
  return 'question ' + i
}`

t.test("an acknowledged coordinator turn's commitment records survive SIGKILL", async (t) => {
  const config = { 'platform.plugins.dirs': [PLUGINS], 'platform.ai.governance.commitment-records.enabled': true }
  await Promise.all(
    [1, 6].map(async (killAt, trial) => {
      const { acked, call } = await crashTrial(t, TURN, { killAt, config, inFlight: 2 })
      const records = (await call('GET', '/api/admin/governance/commitments?limit=1000')).body as {
        outcome: string
        properties: Record<string, unknown>
        verified: boolean
      }[]
      // the panel asks demo and critic with the turn's message: both completions are kept
      const completed = (m: unknown): number =>
        records.filter((r) => r.outcome === 'completed' && r.properties.message === m).length
      t.same(
        acked.filter((m) => completed(m) < 2),
        [],
        `trial ${trial}: every acknowledged turn has its two completed dispatches`
      )
      t.ok(
        records.every((r) => r.verified),
        `trial ${trial}: every record kept verifies`
      )
    })
  )
})
