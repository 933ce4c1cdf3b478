// The journal writer: ids and lineage fields on every event, one append per event-loop turn (or
// per window), in order, and `settled()` for a reader that must see what was emitted before it asked.
import t from 'tap'
import { BATCH_MAX, JournalWriter } from '../../runtime/fleet/journal-writer.js'
import { MemoryJournalStore } from '../../runtime/fleet/memory-journal-store.js'
import { type JournalRecord } from '../../runtime/fleet/fleet-types.js'
import pino from 'pino'

class CountingStore extends MemoryJournalStore {
  batches: number[] = []
  override append(events: JournalRecord[]): Promise<void> {
    this.batches.push(events.length)
    return super.append(events)
  }
}

t.test('one append per event-loop turn, ids and parents as given', async (t) => {
  const store = new CountingStore()
  const w = new JournalWriter(store, pino({ level: 'silent' }))
  const root = w.emit('coord-1', null, 'CoordinationStarted', { coordinatorName: 'lead' })
  const a = w.emit('coord-1', root, 'AgentDispatched', { agentName: 'a', skill: 'run' })
  w.emit('coord-1', a, 'AgentCompleted', { agentName: 'a', skill: 'run', durationMs: 3 })
  t.same(store.batches, [], 'nothing written within the turn')
  await w.settled()
  t.same(store.batches, [3])
  const events = await store.coordination('coord-1')
  t.match(events, [
    { eventId: root, parentEventId: null, type: 'CoordinationStarted', coordinatorName: 'lead' },
    { eventId: a, parentEventId: root, type: 'AgentDispatched' },
    { parentEventId: a, type: 'AgentCompleted', durationMs: 3, timestamp: /Z$/ }
  ])
  // a random prefix per writer (unique across restarts) and a counter
  t.match(root, /^evt-[A-Za-z0-9_-]{12}-[0-9a-z]+$/)
  const other = new JournalWriter(new MemoryJournalStore(), pino({ level: 'silent' }))
  t.not(other.emit('c', null, 'AgentDispatched', {}).slice(0, 17), root.slice(0, 17), 'another writer, another prefix')
  w.emit('coord-1', null, 'AgentDispatched', { agentName: 'b', skill: 'run' })
  await new Promise((r) => setImmediate(r))
  await w.settled()
  t.same(store.batches, [3, 1], 'the next turn is the next append')
})

t.test('a failing store loses its batch, logged, and the next batch still goes', async (t) => {
  let fail = true
  const store = new MemoryJournalStore()
  const lines: string[] = []
  const logger = pino({ level: 'error' }, { write: (s: string) => lines.push(s) })
  const w = new JournalWriter(
    {
      append: (e: JournalRecord[]) => (fail ? Promise.reject(new Error('disk full')) : store.append(e)),
      query: (f) => store.query(f),
      coordination: (id) => store.coordination(id),
      close: () => store.close()
    },
    logger
  )
  w.emit('coord-2', null, 'AgentDispatched', { agentName: 'a', skill: 'run' })
  await w.settled()
  t.match(lines.join(''), /fleet journal: an append failed/)
  fail = false
  w.emit('coord-2', null, 'AgentDispatched', { agentName: 'b', skill: 'run' })
  await w.settled()
  t.match(await store.coordination('coord-2'), [{ agentName: 'b' }])
})

t.test(
  'a burst that never yields to the event loop is written in batches of at most BATCH_MAX, in order',
  async (t) => {
    const store = new CountingStore()
    const w = new JournalWriter(store, pino({ level: 'silent' }))
    const n = 2 * BATCH_MAX + 10
    const ids: string[] = []
    // awaited one by one, as a coordinator's calls are: microtasks only, no turn of the event loop
    for (let i = 0; i < n; i++) {
      ids.push(w.emit('coord-3', null, 'AgentDispatched', { agentName: `a${i}`, skill: 'run' }))
      await Promise.resolve()
    }
    await w.settled()
    t.same(store.batches, [BATCH_MAX, BATCH_MAX, 10], 'written as the burst went, not held until its end')
    t.same(
      (await store.coordination('coord-3')).map((e) => e.eventId),
      ids,
      'every event once, in emit order'
    )
  }
)

t.test(
  'with a window, the events of several event-loop turns are one append; a reader does not wait for it',
  async (t) => {
    const store = new CountingStore()
    const w = new JournalWriter(store, pino({ level: 'silent' }), 600_000)
    for (let i = 0; i < 3; i++) {
      w.emit('coord-4', null, 'AgentDispatched', { agentName: `a${i}`, skill: 'run' })
      await new Promise((r) => setImmediate(r))
    }
    t.same(store.batches, [], 'held for the window across event-loop turns')
    // a reader writes them at once, and the window's timer goes with them (the test would hang on it)
    await w.settled()
    t.same(store.batches, [3], 'one append')
    w.emit('coord-4', null, 'AgentDispatched', { agentName: 'b', skill: 'run' })
    await w.settled()
    t.same(store.batches, [3, 1])
    t.same(
      (await store.coordination('coord-4')).map((e) => e.agentName),
      ['a0', 'a1', 'a2', 'b'],
      'in emit order'
    )
    // a short window ends on its own: its timer was set before this wait's
    const short = new CountingStore()
    const ws = new JournalWriter(short, pino({ level: 'silent' }), 5)
    ws.emit('coord-5', null, 'AgentDispatched', { agentName: 'c', skill: 'run' })
    ws.emit('coord-5', null, 'AgentDispatched', { agentName: 'd', skill: 'run' })
    await new Promise((r) => setTimeout(r, 50))
    t.same(short.batches, [2], 'written when the window ends, without a reader')
  }
)
