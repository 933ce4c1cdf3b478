// Workflows and eval runs after SIGKILL: every save answered 200 is there after a restart on the
// same data directory, with more saves in flight when the kill lands.
import t from 'tap'
import { crashTrial } from './crash-server.js'

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
      const missing: unknown[] = []
      for (const id of acked) if ((await call('GET', `/api/admin/workflow/${id}`)).status !== 200) missing.push(id)
      t.same(missing, [], `trial ${trial}: every acknowledged workflow is there`)
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
      const missing: unknown[] = []
      for (const id of acked) if ((await call('GET', `/api/admin/evals/runs/${id}`)).status !== 200) missing.push(id)
      t.same(missing, [], `trial ${trial}: every acknowledged eval run is there`)
    })
  )
})
