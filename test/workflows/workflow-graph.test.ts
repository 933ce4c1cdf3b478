// What a run checks before it starts and the order it runs nodes in: the node limit, cycles named by
// their nodes, unknown edge conditions and bad node config refused, topological order with the
// manifest's order among ready nodes, and which edges a node's outcome takes.
import t from 'tap'
import { parseManifest } from '../../runtime/workflows/workflow-manifest.js'
import { graphOf, MAX_WORKFLOW_NODES, takenEdges } from '../../runtime/workflows/workflow-graph.js'

function manifest(nodes: unknown[], edges: unknown[] = []) {
  return parseManifest({ id: 'wf', name: 'wf', version: 1, nodes, edges })
}
const agent = (id: string, config: Record<string, unknown> = {}) => ({ id, type: 'agent', config })

t.test('topological order; among ready nodes the manifest order', async (t) => {
  const g = graphOf(
    manifest(
      [agent('z'), agent('b'), agent('a'), { id: 'j', type: 'join' }, { id: 'out', type: 'output' }],
      [
        { from: 'j', to: 'out' },
        { from: 'a', to: 'j' },
        { from: 'b', to: 'j' },
        { from: 'z', to: 'a' }
      ]
    )
  )
  t.same(
    g.order.map((n) => n.id),
    ['z', 'b', 'a', 'j', 'out']
  )
  t.same(
    g.incoming.get('j')!.map((e) => e.from),
    ['a', 'b'],
    'inputs in edge order'
  )
})

t.test('a cycle is refused naming the nodes that cannot run', async (t) => {
  const w = manifest(
    [agent('start'), agent('a'), agent('b'), agent('c'), { id: 'end', type: 'output' }],
    [
      { from: 'start', to: 'a' },
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
      { from: 'c', to: 'a' },
      { from: 'c', to: 'end' }
    ]
  )
  t.throws(() => graphOf(w), {
    code: 'PLT_ERR_WORKFLOW_NOT_RUNNABLE',
    message: 'workflow contains a cycle through nodes [a, b, c, end]'
  })
})

t.test('more than 500 nodes is refused', async (t) => {
  const nodes = Array.from({ length: MAX_WORKFLOW_NODES + 1 }, (_, i) => agent(`n${i}`))
  t.throws(() => graphOf(manifest(nodes)), { message: 'workflow has 501 nodes, limit is 500' })
  t.equal(graphOf(manifest(nodes.slice(1))).order.length, 500, '500 runs')
})

t.test('unknown conditions and bad node config are refused before anything runs', async (t) => {
  t.throws(() => graphOf(manifest([agent('a'), agent('b')], [{ from: 'a', to: 'b', condition: 'sucess' }])), {
    message: 'edge a -> b has an unknown condition: sucess (success, failure, contains:<text>, default or blank)'
  })
  const bad: [unknown, string][] = [
    [agent('a', { agent: 7 }), 'node a: config.agent must be a string'],
    [agent('a', { agent: '' }), 'node a: config.agent must be a non-empty string'],
    [agent('a', { args: [1] }), 'node a: config.args must be an object'],
    [{ id: 'j', type: 'join', config: { separator: 1 } }, 'node j: config.separator must be a string'],
    [
      { id: 'ok', type: 'approval', config: { timeoutSeconds: 0 } },
      'node ok: config.timeoutSeconds must be a number of seconds above 0 and at most 604800'
    ],
    [
      { id: 'ok', type: 'approval', config: { timeoutSeconds: '5' } },
      'node ok: config.timeoutSeconds must be a number of seconds above 0 and at most 604800'
    ]
  ]
  for (const [node, message] of bad) t.throws(() => graphOf(manifest([node])), { message }, message)
})

t.test('which edges an outcome takes', async (t) => {
  const w = manifest(
    [agent('c'), agent('s'), agent('f'), agent('k'), agent('d'), agent('always')],
    [
      { from: 'c', to: 's', condition: 'success' },
      { from: 'c', to: 'f', condition: 'failure' },
      { from: 'c', to: 'k', condition: 'contains:urgent' },
      { from: 'c', to: 'd', condition: 'default' },
      { from: 'c', to: 'always', condition: '' }
    ]
  )
  const out = graphOf(w).outgoing.get('c')!
  const to = (ok: boolean, text: string) => [...takenEdges(out, { ok, text })].map((e) => e.to)
  t.same(to(true, 'urgent ticket'), ['s', 'k', 'always'])
  t.same(to(false, ''), ['f', 'always'])
  const onlyContains = out.filter((e) => e.to === 'k' || e.to === 'd' || e.to === 'always')
  t.same(
    [...takenEdges(onlyContains, { ok: true, text: 'routine' })].map((e) => e.to),
    ['d', 'always'],
    'default when no condition matched (blank edges do not count)'
  )
  t.same(
    [...takenEdges(onlyContains, { ok: true, text: 'urgent' })].map((e) => e.to),
    ['k', 'always']
  )
})
