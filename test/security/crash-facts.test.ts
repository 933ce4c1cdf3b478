// Operator facts after SIGKILL: every fact the admin route answered 200 for is there after a
// restart on the same data directory, with more facts in flight when the kill lands.
import t from 'tap'
import { crashTrial, DEMO_AGENTS } from './crash-server.js'

const FACT = `async (i, call) => {
  const userId = 'user-' + (i % 5)
  const fact = await call('POST', '/api/admin/agents/demo/facts?userId=' + userId, { content: 'fact ' + i })
  return { userId, id: fact.id, content: fact.content }
}`

t.test('an acknowledged operator fact survives SIGKILL', async (t) => {
  const config = { ...DEMO_AGENTS, 'platform.ai.governance.memory.enabled': true }
  await Promise.all(
    [1, 12].map(async (killAt, trial) => {
      const { acked, call } = await crashTrial(t, FACT, { killAt, config })
      const missing: unknown[] = []
      for (const fact of acked as { userId: string; id: string; content: string }[]) {
        const got = await call('GET', `/api/admin/agents/demo/facts?userId=${fact.userId}&limit=1000`)
        const kept = (got.body?.facts ?? []) as { id: string; content: string }[]
        if (!kept.some((f) => f.id === fact.id && f.content === fact.content)) missing.push(fact)
      }
      t.same(missing, [], `trial ${trial}: every acknowledged fact is there`)
    })
  )
})
