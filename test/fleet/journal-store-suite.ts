// The JournalStore contract, run against every store (memory and LMDB).
import type { Test } from 'tap'
import type { JournalRecord, JournalStore } from '../../runtime/fleet/fleet-types.js'

/**
 * What a store test gives the suite: `open()` returns a store over this fixture's data, bounded
 * by the fixture's `maxEvents`; the first call finds it empty.
 */
export interface JournalFixture {
  open(): Promise<JournalStore>
}
export type MakeFixture = (t: Test, maxEvents: number) => Promise<JournalFixture>

export const T0 = Date.parse('2026-11-24T10:00:00.000Z')
export const at = (s: number): string => new Date(T0 + s * 1000).toISOString()

let n = 0
/** A journal event at `at(s)`; `fields` as the fleet writes them. */
export function ev(
  type: JournalRecord['type'],
  coordinationId: string,
  s: number,
  fields: Record<string, unknown> = {}
): JournalRecord {
  return { eventId: `e-${++n}`, parentEventId: null, type, coordinationId, timestamp: at(s), ...fields }
}

const ids = (events: JournalRecord[]): string[] => events.map((e) => e.eventId)

export function runJournalStoreSuite(t: Test, kind: string, make: MakeFixture): void {
  const store = async (t: Test, max = 1000): Promise<JournalStore> => {
    const s = await (await make(t, max)).open()
    t.teardown(() => s.close())
    return s
  }

  t.test(`${kind}: coordination oldest first, query newest first, across batches`, async (t) => {
    const s = await store(t)
    const start = ev('CoordinationStarted', 'c-1', 0, { coordinatorName: 'ops' })
    const d1 = ev('AgentDispatched', 'c-1', 1, { agentName: 'research', skill: 'run', parentEventId: start.eventId })
    const other = ev('CoordinationStarted', 'c-2', 1, { coordinatorName: 'ops' })
    const done = ev('AgentCompleted', 'c-1', 2, { agentName: 'research', skill: 'run', durationMs: 12 })
    await s.append([start, d1])
    await s.append([other])
    await s.append([done])
    t.same(await s.coordination('c-1'), [start, d1, done], 'whole records, oldest first')
    t.same(ids(await s.coordination('c-2')), [other.eventId])
    t.same(
      ids(await s.query({ limit: 10 })),
      [done, other, d1, start].map((e) => e.eventId),
      'newest first'
    )
    t.same(
      ids(await s.query({ coordinationId: 'c-1', limit: 10 })),
      [done, d1, start].map((e) => e.eventId)
    )
    await s.append([])
    t.equal((await s.query({ limit: 10 })).length, 4, 'an empty batch adds nothing')
  })

  t.test(`${kind}: events of one millisecond keep their append order; a late stamp sorts by its time`, async (t) => {
    const s = await store(t)
    const a = ev('AgentDispatched', 'c', 5, { agentName: 'a' })
    const b = ev('AgentDispatched', 'c', 5, { agentName: 'b' })
    const c = ev('AgentDispatched', 'c', 5, { agentName: 'c' })
    await s.append([a, b])
    await s.append([c])
    const late = ev('AgentFailed', 'c', 3, { agentName: 'a', error: 'x' })
    await s.append([late])
    t.same(
      ids(await s.coordination('c')),
      [late, a, b, c].map((e) => e.eventId)
    )
    t.same(
      ids(await s.query({ limit: 10 })),
      [c, b, a, late].map((e) => e.eventId)
    )
  })

  t.test(`${kind}: appends not awaited keep the order they were called in`, async (t) => {
    const s = await store(t)
    const events = Array.from({ length: 20 }, (_, i) => ev('AgentDispatched', 'c', 7, { agentName: `a${i}` }))
    await Promise.all(events.map((e) => s.append([e])))
    t.same(ids(await s.coordination('c')), ids(events))
  })

  t.test(`${kind}: coordinationId wins over agent; agent matches every agent field`, async (t) => {
    const s = await store(t)
    const events = [
      ev('AgentDispatched', 'c-1', 1, { agentName: 'x', skill: 'run' }),
      ev('AgentHandoff', 'c-2', 2, { fromAgent: 'x', toAgent: 'y', reason: 'busy' }),
      ev('AgentHandoff', 'c-2', 3, { fromAgent: 'y', toAgent: 'x', reason: 'back' }),
      ev('RouteEvaluated', 'c-3', 4, { inputAgent: 'x', selectedAgent: 'z', matched: true }),
      ev('RouteEvaluated', 'c-3', 5, { inputAgent: 'w', selectedAgent: 'x', matched: false }),
      ev('AgentEvaluated', 'c-3', 6, { agentName: 'z', evaluatorName: 'x', score: 1, passed: true }),
      ev('CoordinationStarted', 'c-4', 7, { coordinatorName: 'x' })
    ]
    await s.append(events)
    t.same(
      ids(await s.query({ agent: 'x', limit: 10 })),
      ids(events.slice(0, 5)).reverse(),
      'agentName, fromAgent, toAgent, inputAgent, selectedAgent; not evaluatorName or coordinatorName'
    )
    t.same(ids(await s.query({ agent: 'y', limit: 10 })), ids(events.slice(1, 3)).reverse())
    t.same(
      ids(await s.query({ coordinationId: 'c-3', agent: 'y', limit: 10 })),
      ids(events.slice(3, 6)).reverse(),
      'the agent filter is ignored beside a coordination'
    )
    t.same(await s.query({ agent: 'nobody', limit: 10 }), [])
  })

  t.test(`${kind}: since and until are inclusive, alone and with each filter; limit keeps the newest`, async (t) => {
    const s = await store(t)
    const events = Array.from({ length: 10 }, (_, i) =>
      ev(i % 2 === 0 ? 'AgentDispatched' : 'AgentCompleted', i < 5 ? 'c-a' : 'c-b', i, { agentName: `ag${i % 3}` })
    )
    await s.append(events)
    const ms = (i: number) => T0 + i * 1000
    const pick = (...is: number[]) => is.map((i) => events[i]!.eventId)
    t.same(ids(await s.query({ since: ms(3), until: ms(6), limit: 10 })), pick(6, 5, 4, 3))
    t.same(ids(await s.query({ since: ms(8), limit: 10 })), pick(9, 8))
    t.same(ids(await s.query({ until: ms(1), limit: 10 })), pick(1, 0))
    t.same(ids(await s.query({ since: ms(3) + 1, until: ms(6) - 1, limit: 10 })), pick(5, 4), 'bounds between events')
    t.same(ids(await s.query({ since: ms(3) - 0.5, until: ms(6) + 0.5, limit: 10 })), pick(6, 5, 4, 3), 'fractions')
    t.same(ids(await s.query({ since: ms(3) + 0.5, until: ms(6) - 0.5, limit: 10 })), pick(5, 4))
    t.same(ids(await s.query({ coordinationId: 'c-a', since: ms(2), limit: 10 })), pick(4, 3, 2))
    t.same(ids(await s.query({ coordinationId: 'c-b', until: ms(6), limit: 10 })), pick(6, 5))
    t.same(ids(await s.query({ agent: 'ag0', since: ms(3), until: ms(9), limit: 10 })), pick(9, 6, 3))
    t.same(ids(await s.query({ since: ms(7), until: ms(2), limit: 10 })), [], 'an empty window')
    t.same(ids(await s.query({ limit: 3 })), pick(9, 8, 7))
    t.same(ids(await s.query({ agent: 'ag1', limit: 2 })), pick(7, 4))
    t.same(ids(await s.query({ coordinationId: 'c-a', since: ms(1), limit: 2 })), pick(4, 3))
  })

  t.test(`${kind}: unknown coordinations and agents read as empty`, async (t) => {
    const s = await store(t)
    t.same(await s.coordination('nope'), [])
    t.same(await s.query({ limit: 5 }), [])
    await s.append([ev('CoordinationStarted', 'c-ab', 1, { coordinatorName: 'o' })])
    t.same(await s.coordination('c-a'), [], 'a prefix of a known id is not that id')
    t.same(await s.query({ coordinationId: 'c-a', limit: 5 }), [])
    t.same(await s.query({ agent: 'o', limit: 5 }), [])
  })

  t.test(`${kind}: past the bound the oldest events go, from every read`, async (t) => {
    const s = await store(t, 5)
    const events = Array.from({ length: 8 }, (_, i) =>
      ev('AgentDispatched', i < 4 ? 'c-old' : 'c-new', i, { agentName: i % 2 === 0 ? 'even' : 'odd' })
    )
    await s.append(events.slice(0, 4))
    await s.append(events.slice(4, 6))
    await s.append(events.slice(6))
    t.same(ids(await s.query({ limit: 100 })), ids(events.slice(3)).reverse(), 'the newest five')
    t.same(ids(await s.coordination('c-old')), [events[3]!.eventId])
    t.same(ids(await s.query({ coordinationId: 'c-old', limit: 100 })), [events[3]!.eventId])
    t.same(ids(await s.query({ agent: 'even', limit: 100 })), [events[6]!.eventId, events[4]!.eventId])
    t.same(ids(await s.query({ until: T0 + 2000, limit: 100 })), [], 'time reads too')
    const many = Array.from({ length: 12 }, (_, i) => ev('AgentCompleted', 'c-burst', 20 + i, { agentName: 'even' }))
    await s.append(many)
    t.same(ids(await s.query({ limit: 100 })), ids(many.slice(7)).reverse(), 'a batch larger than the bound')
    t.same(await s.coordination('c-new'), [])
    t.equal((await s.query({ agent: 'even', limit: 100 })).length, 5)
  })

  t.test(`${kind}: a batch with a bad event is refused whole with a clear error`, async (t) => {
    const s = await store(t)
    const good = ev('CoordinationStarted', 'c', 1, { coordinatorName: 'o' })
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ timestamp: 'yesterday' }, /invalid timestamp: yesterday/],
      [{ timestamp: '' }, /invalid timestamp: $/],
      [{ coordinationId: '' }, /has no coordinationId/],
      [{ eventId: undefined }, /has no eventId/],
      [{ type: '' }, /has no type/],
      [{ parentEventId: 7 }, /parentEventId must be a string or null/]
    ]
    for (const [over, message] of bad) {
      const e = { ...ev('AgentDispatched', 'c', 2, { agentName: 'a' }), ...over } as JournalRecord
      await t.rejects(s.append([good, e]), { name: 'TypeError', message }, JSON.stringify(over).slice(0, 40))
    }
    t.same(await s.query({ limit: 10 }), [], 'nothing of a refused batch is kept')
    t.same(await s.coordination('c'), [])
  })

  t.test(`${kind}: any name a coordinator calls is kept and found: long, odd, or prefixing another`, async (t) => {
    const s = await store(t)
    const long = 'agent-'.repeat(1000)
    const names = [long, long + 'x', 'a\nb', 'a\u0000', '\u0000' + 'b'.repeat(100), 'a', 'ü'.repeat(600), '\u{1F600}']
    const events = names.map((name, i) => ev('AgentDispatched', `c-${name}`, i, { agentName: name, skill: 'run' }))
    await s.append(events)
    for (const [i, name] of names.entries()) {
      const label = JSON.stringify(name.slice(0, 12))
      t.same(ids(await s.query({ agent: name, limit: 10 })), [events[i]!.eventId], `agent ${label}`)
      t.same(ids(await s.coordination(`c-${name}`)), [events[i]!.eventId], `coordination ${label}`)
      t.same(ids(await s.query({ coordinationId: `c-${name}`, limit: 10 })), [events[i]!.eventId])
    }
  })

  t.test(`${kind}: what is kept is a copy of what was appended`, async (t) => {
    const s = await store(t)
    const e = ev('AgentFailed', 'c', 1, { agentName: 'a', error: 'boom', detail: { n: 1 } })
    await s.append([e])
    e.error = 'changed'
    ;(e.detail as { n: number }).n = 2
    t.match((await s.coordination('c'))[0], { error: 'boom', detail: { n: 1 } })
  })

  t.test(`${kind}: a closed store refuses appends`, async (t) => {
    const s = await (await make(t, 10)).open()
    await s.close()
    await t.rejects(s.append([ev('CoordinationStarted', 'c', 1)]), { message: 'journal store is closed' })
  })
}
