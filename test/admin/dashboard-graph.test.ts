// The dashboard's graph model, fed the shapes the admin API answers: a journal tree
// (`journal/{id}/tree`, with and without parent links) and a workflow's nodes and edges.
import t from 'tap'
// plain browser modules: the model functions touch no DOM, so Node runs them as they are
// @ts-expect-error no declaration file for a browser module
import { layout, journalGraph } from '../../dashboard/js/graph.js'

interface Pos {
  col: number
  row: number
}
const L = layout as (
  n: { id: string }[],
  e: { from: string; to: string }[]
) => { pos: Map<string, Pos>; edges: unknown[] }
const J = journalGraph as (events: Record<string, unknown>[]) => {
  nodes: { id: string; label: string; kind: string }[]
  edges: { from: string; to: string }[]
}

t.test('a linked coordination: dispatches fan out from the start, failures and handoffs marked', async (t) => {
  const tree = [
    { eventId: 'e0', type: 'CoordinationStarted', coordinationId: 'c-1' },
    { eventId: 'e1', parentEventId: 'e0', type: 'AgentDispatched', agentName: 'research' },
    { eventId: 'e2', parentEventId: 'e0', type: 'AgentDispatched', agentName: 'writer' },
    { eventId: 'e3', parentEventId: 'e1', type: 'AgentCompleted', agentName: 'research' },
    { eventId: 'e4', parentEventId: 'e2', type: 'AgentFailed', agentName: 'writer' },
    { eventId: 'e5', parentEventId: 'e4', type: 'AgentHandoff', toAgent: 'editor' },
    { eventId: 'e6', parentEventId: 'e3', type: 'AgentEvaluated', agentName: 'judge' }
  ]
  const { nodes, edges } = J(tree)
  t.equal(nodes.length, 7)
  t.same(
    edges.map((e) => `${e.from}>${e.to}`),
    ['e0>e1', 'e0>e2', 'e1>e3', 'e2>e4', 'e4>e5', 'e3>e6']
  )
  t.same(
    nodes.map((n) => n.kind),
    ['', '', '', 'done', 'failed', 'handoff', 'eval']
  )
  t.equal(nodes[1]!.label, 'AgentDispatched · research')
  const { pos } = L(nodes, edges)
  t.same(
    nodes.map((n) => pos.get(n.id)!.col),
    [0, 1, 1, 2, 2, 3, 3]
  )
  t.not(pos.get('e1')!.row, pos.get('e2')!.row, 'siblings do not overlap')
  // each child sits in its parent's row, so no two edges cross
  t.same(
    ['e3', 'e4', 'e5', 'e6'].map((id) => pos.get(id)!.row),
    [pos.get('e1')!.row, pos.get('e2')!.row, pos.get('e4')!.row, pos.get('e3')!.row]
  )
})

t.test('the nested tree journal/{id}/tree answers: every node drawn, edges from the nesting', async (t) => {
  const tree = [
    {
      eventId: 's',
      type: 'CoordinationStarted',
      children: [
        {
          eventId: 'd1',
          parentEventId: 's',
          type: 'AgentDispatched',
          agentName: 'research',
          children: [{ eventId: 'c1', parentEventId: 'd1', type: 'AgentCompleted', agentName: 'research' }]
        },
        { eventId: 'end', parentEventId: 's', type: 'CoordinationCompleted' }
      ]
    },
    { eventId: 'fk', parentEventId: 'elsewhere', type: 'ForkCreated' }
  ]
  const { nodes, edges } = J(tree)
  t.same(
    nodes.map((n) => n.id),
    ['s', 'd1', 'c1', 'end', 'fk'],
    'each parent before its children'
  )
  t.same(
    edges.map((e) => `${e.from}>${e.to}`),
    ['s>d1', 'd1>c1', 's>end'],
    "no edge to a fork's parent in another coordination"
  )
  t.equal(L(nodes, edges).pos.size, 5)
})

t.test('events without parent links are drawn in order; ids default to positions', async (t) => {
  const { nodes, edges } = J([{ type: 'AgentDispatched' }, { type: 'AgentCompleted' }])
  t.same(
    nodes.map((n) => n.id),
    ['0', '1']
  )
  t.same(edges, [{ from: '0', to: '1' }])
})

t.test('a workflow with a cycle and an edge to an unknown node still lays out', async (t) => {
  const nodes = [{ id: 'a' }, { id: 'b' }, { id: 'c' }]
  const { pos, edges } = L(nodes, [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
    { from: 'c', to: 'a' },
    { from: 'a', to: 'ghost' }
  ])
  t.equal(edges.length, 3, 'the unknown endpoint is dropped')
  for (const n of nodes) t.ok(pos.get(n.id)!.col < nodes.length, `${n.id} within bounds`)
})
