import t from 'tap'
import { RunTable, type Run } from '../../runtime/interactions/run-table.js'
import { StepCapture } from '../../runtime/interactions/capture.js'

// A run's lease must be renewed until the run leaves the table (its terminal header written), not
// only until its runtime finished: with its last steps queued behind a slow store, a lapsed lease
// had a sweep end a run `node lost` while its own node was still writing it.
function run(id: string, store: boolean): Run {
  const capture = new StepCapture({ maxSteps: 100, coalesceMs: 0, emit: () => {} })
  return { header: { id, userId: 'u', store }, capture, dropped: false, release: () => {} } as unknown as Run
}

t.test('a run keeps its lease from start to its last write, and only a stored, live one', async (t) => {
  const table = new RunTable()
  const a = run('a', true)
  const b = run('b', true)
  const unstored = run('c', false)
  for (const r of [a, b, unstored]) table.add(r)
  t.same(table.leased().sort(), ['a', 'b'], 'stored runs in flight are leased; a run kept nowhere has no lease')

  t.ok(a.capture.complete('done'), 'the runtime finished: the outcome is decided')
  t.same(table.leased().sort(), ['a', 'b'], 'decided but not yet written: still leased')

  b.dropped = true
  t.same(table.leased(), ['a'], 'a dropped run writes nothing more and is not renewed')

  table.forget(a)
  t.same(table.leased(), [], 'written and forgotten: no lease')
})
