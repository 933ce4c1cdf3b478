// The tree and log of one coordination's events, on the cases a live journal rarely shows.
import t from 'tap'
import { journalLog, journalTree, MAX_TREE_DEPTH, type JournalNode } from '../../runtime/admin/journal-format.js'
import type { JournalEvent } from '../../runtime/admin/index.js'

const ev = (eventId: string, parentEventId: string | null, fields: Record<string, unknown> = {}): JournalEvent => ({
  eventId,
  parentEventId,
  type: 'AgentDispatched',
  coordinationId: 'c',
  timestamp: '2026-11-24T10:00:00.000Z',
  ...fields
})

/** Every node of a tree, depth first, without recursion. */
function all(tree: JournalNode[]): JournalNode[] {
  const out: JournalNode[] = []
  const stack = [...tree].reverse()
  while (stack.length > 0) {
    const n = stack.pop()!
    out.push(n)
    stack.push(...[...((n.children as JournalNode[] | undefined) ?? [])].reverse())
  }
  return out
}

t.test('damaged links never drop an event: a cycle, a self-parent, a repeated id', async (t) => {
  const tree = journalTree([ev('a', 'b'), ev('b', 'a'), ev('r', null), ev('self', 'self'), ev('r', null, { n: 2 })])
  t.same(
    tree.map((n) => n.eventId),
    ['r', 'self', 'r', 'a'],
    'roots first in journal order, then what a cycle held'
  )
  t.same(
    (tree[3]!.children as JournalNode[]).map((n) => n.eventId),
    ['b']
  )
  t.equal(all(tree).length, 5)
})

t.test(`a chain deeper than ${MAX_TREE_DEPTH} goes on as a new root, and the answer serialises`, async (t) => {
  const events = Array.from({ length: 3000 }, (_, i) => ev(`e${i}`, i === 0 ? null : `e${i - 1}`))
  const tree = journalTree(events)
  t.equal(all(tree).length, 3000, 'every event')
  t.same(
    tree.map((n) => n.eventId),
    Array.from({ length: Math.ceil(3000 / MAX_TREE_DEPTH) }, (_, i) => `e${i * MAX_TREE_DEPTH}`)
  )
  t.equal(tree[1]!.parentEventId, `e${MAX_TREE_DEPTH - 1}`, 'a continued chain keeps its link')
  t.ok(JSON.stringify(tree).length > 0)
})

t.test('the log: no events, missing fields, a type without a line of its own', async (t) => {
  t.equal(journalLog([]), '0 events:\n')
  t.equal(
    journalLog([
      ev('x', null, { type: 'AgentCompleted' }),
      ev('y', null, { type: 'SomethingNew', agentName: 'a', detail: { k: 1 }, note: 'two\r\nlines' }),
      ev('z', null, { type: 'AgentFailed', agentName: 'w', error: '' })
    ]),
    '3 events:\n  DONE  ? (?)\n  SomethingNew  agentName=a detail={"k":1} note=two lines\n  FAIL  w\n'
  )
})
