// Governance commitment records after SIGKILL: a coordinator turn answered 200 has recorded its
// dispatches' commitments (admit, started, completed or failed, per agent), and every one is
// there, signed and verifying, after a restart on the same data directory, with more turns in
// flight when the kill lands.
import t from 'tap'
import { crashTrial, DEMO_AGENTS } from './crash-server.js'

// the panel asks the demo agent and the critic at once: each a dispatch with its records
const TURN = `async (i, call) => {
  const done = await call('POST', '/api/interactions', { agentId: 'panel', message: 'how do plugins load? ' + i })
  const ids = [...new Set(JSON.stringify(done.steps).match(/coord-[0-9a-f-]+/g) ?? [])]
  if (ids.length === 0) throw new Error('no coordination in ' + JSON.stringify(done))
  return ids
}`

t.test("an acknowledged coordinator turn's commitment records survive SIGKILL", async (t) => {
  const config = { ...DEMO_AGENTS, 'platform.ai.governance.commitment-records.enabled': true }
  await Promise.all(
    [1, 8].map(async (killAt, trial) => {
      // the listing needs no agent: the restart loads none
      const { acked, call } = await crashTrial(t, TURN, { killAt, config, after: { 'platform.plugins.dirs': [] } })
      const records = (await call('GET', '/api/admin/governance/commitments?limit=1000')).body as {
        coordinationId: string
        subject: string
        outcome: string
        verified: boolean
      }[]
      const missing: string[] = []
      for (const id of (acked as string[][]).flat()) {
        const mine = records.filter((r) => r.coordinationId === id)
        for (const agent of ['demo', 'critic']) {
          const outcomes = mine.filter((r) => r.subject === agent && r.verified).map((r) => r.outcome)
          if (!outcomes.includes('started') || !(outcomes.includes('completed') || outcomes.includes('failed')))
            missing.push(`${id} ${agent}: ${outcomes.join(',')}`)
        }
      }
      t.same(missing, [], `trial ${trial}: every acknowledged turn's records are there, verified`)
    })
  )
})
