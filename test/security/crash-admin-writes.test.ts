// Workflows, eval runs and operator facts after SIGKILL: every save answered 200 is there after a
// restart on the same data directory, with more saves in flight when the kill lands.
import t from 'tap'
import { PLUGINS, crashTrial } from './crash-server.js'

const WORKFLOW = `async (i, call) => {
  const id = 'wf-' + i
  await call('POST', '/api/admin/workflow', {
    id, name: 'Flow ' + i, version: 1,
    nodes: [{ id: 'ask', type: 'agent' }, { id: 'done', type: 'output' }],
    edges: [{ from: 'ask', to: 'done' }]
  })
  return id
}`

t.test('an acknowledged workflow save survives SIGKILL', async (t) => {
  await Promise.all(
    [1, 12].map(async (killAt, trial) => {
      const { acked, call } = await crashTrial(t, WORKFLOW, { killAt })
      for (const id of acked)
        t.equal((await call('GET', `/api/admin/workflow/${id}`)).status, 200, `trial ${trial}: ${id}`)
    })
  )
})

const EVAL_RUN = `async (i, call) => {
  const id = 'run-' + i
  await call('POST', '/api/admin/evals/runs', { id, baseline: 'bot:v1', timestamp: '2026-03-01T10:00:00Z', passed: i % 2 === 0 })
  return id
}`

t.test('an acknowledged eval run survives SIGKILL', async (t) => {
  await Promise.all(
    [1, 12].map(async (killAt, trial) => {
      const { acked, call } = await crashTrial(t, EVAL_RUN, { killAt })
      for (const id of acked)
        t.equal((await call('GET', `/api/admin/evals/runs/${id}`)).status, 200, `trial ${trial}: ${id}`)
    })
  )
})

// the demo agent (bundled plugins) is the one facts are kept about
const FACT = `async (i, call) => {
  const fact = await call('POST', '/api/admin/agents/demo/facts?userId=u-1', { content: 'fact ' + i })
  return fact.id
}`

t.test('an acknowledged operator fact survives SIGKILL', async (t) => {
  const config = { 'platform.plugins.dirs': [PLUGINS], 'platform.ai.governance.memory.enabled': true }
  await Promise.all(
    [1, 12].map(async (killAt, trial) => {
      const { acked, call } = await crashTrial(t, FACT, { killAt, config })
      const kept = await call('GET', '/api/admin/agents/demo/facts?userId=u-1&limit=1000')
      const ids = new Set((kept.body.facts as { id: string }[]).map((f) => f.id))
      t.same(
        acked.filter((id) => !ids.has(id as string)),
        [],
        `trial ${trial}: every acknowledged fact is kept`
      )
    })
  )
})
