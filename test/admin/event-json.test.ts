// The stream's event serialiser writes what JSON.stringify writes for `{...event, node, seq}`, for any
// field values (generated), so the hand-written fast path can never change a frame's bytes.
import t from 'tap'
import fc from 'fast-check'
import { eventJson, wsFrames, type FrameScratch } from '../../runtime/admin/event-json.js'
import type { PlatformEvent } from '../../runtime/events/index.js'

const NODE = 'node-3f9c0a1b2c3d'
const reference = (e: object, seq: number): string => JSON.stringify({ ...e, node: NODE, seq })

t.test('the events of the data path come out as JSON.stringify writes them, node and seq last', async (t) => {
  const e = {
    type: 'ResourceConnected',
    uuid: '5e0f6f3c-1234-4321-abcd-0123456789ab',
    transport: 'WEBSOCKET',
    broadcaster: '/platform/rooms/churn-12',
    timestamp: '2026-11-24T23:01:02.123Z'
  } as PlatformEvent
  t.equal(eventJson(e, 42, NODE), reference(e, 42))
  t.same(Object.keys(JSON.parse(eventJson(e, 42, NODE))), [
    'type',
    'uuid',
    'transport',
    'broadcaster',
    'timestamp',
    'node',
    'seq'
  ])
  const m = { type: 'MessageBroadcast', broadcasterId: 'r', resourceCount: 3, timestamp: 't' } as PlatformEvent
  t.equal(eventJson(m, 1, NODE), reference(m, 1))
  const c = { type: 'ControlActionExecuted', principal: 'a', action: 'x', target: 'y', success: false, timestamp: 't' }
  t.equal(eventJson(c as PlatformEvent, 7, NODE), reference(c, 7))
})

t.test('strings that need escaping, odd numbers, nested and skipped values', async (t) => {
  const e = {
    type: 'ResourceDisconnected',
    uuid: 'quote " back \\ nl \n tab \t nul \u0000 del \u007f',
    reason: 'lone \ud800 surrogate, pair \ud83d\ude00, line sep \u2028',
    n: NaN,
    inf: -Infinity,
    neg: -0,
    big: 1e21,
    small: 5e-7,
    nested: { a: [1, 'b', null], d: new Date(0) },
    gone: undefined,
    fn: () => 1,
    nul: null,
    timestamp: 't'
  }
  t.equal(eventJson(e as unknown as PlatformEvent, 9, NODE), reference(e, 9))
})

t.test('generated events: same text as JSON.stringify', async (t) => {
  const value = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.string({ unit: 'grapheme-composite' }),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.jsonValue()
  )
  fc.assert(
    fc.property(
      // events never carry their own node or seq; `__proto__` is not a field an object literal can spread
      fc.dictionary(
        fc.string({ maxLength: 8 }).filter((k) => k !== 'seq' && k !== 'node' && k !== '__proto__'),
        value,
        { maxKeys: 6 }
      ),
      fc.nat(),
      (fields, seq) => {
        const e = { type: 'AgentDispatched', ...fields, timestamp: '2026-11-24T23:01:02.123Z' }
        return eventJson(e as unknown as PlatformEvent, seq, NODE) === reference(e, seq)
      }
    ),
    { numRuns: 2000 }
  )
  t.pass('2000 generated events')
})

t.test('a batch becomes one message per event, each the bytes of that event alone', async (t) => {
  const ascii = { type: 'ResourceConnected', uuid: 'u-1', transport: 'WEBSOCKET', broadcaster: 'b', timestamp: 't' }
  const wide = {
    type: 'ResourceConnected',
    uuid: 'é 😀 \ud800',
    transport: 'WEBSOCKET',
    broadcaster: 'ü',
    timestamp: 't'
  }
  const empty = { type: 'ResourceDisconnected', uuid: '', reason: '', timestamp: 't' }
  // one scratch buffer for every batch, as the stream keeps it: each batch is read before the next
  const scratch: FrameScratch = { buf: undefined }
  const check = (events: object[]): void => {
    const batch = {
      events: events as PlatformEvent[],
      nodes: events.map(() => NODE),
      seqs: events.map((_, i) => i + 1)
    }
    for (const frames of [wsFrames(batch), wsFrames(batch, scratch)])
      t.same(
        frames.map((f) => f.toString()),
        events.map((e, i) => reference(e, i + 1))
      )
  }
  check([ascii, ascii, empty])
  check([ascii, wide, empty, ascii])
  check([wide])
  // a batch beyond the kept size gets a buffer of its own; the kept one still serves the next
  const big = { ...ascii, uuid: 'x'.repeat(400 * 1024) }
  check([big, ascii])
  t.ok(scratch.buf !== undefined && scratch.buf.length <= 1024 * 1024, 'the scratch buffer kept stays bounded')
  check([ascii, wide])
  t.same(wsFrames({ events: [], nodes: [], seqs: [] }), [])
  // generated batches: whatever the characters, no event's message holds a byte of its neighbour
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 6 }), { maxLength: 5 }), (uuids) => {
      const events = uuids.map((uuid) => ({ type: 'ResourceDisconnected', uuid, reason: 'r', timestamp: 't' }))
      const frames = wsFrames({
        events: events as PlatformEvent[],
        nodes: events.map(() => NODE),
        seqs: events.map(() => 3)
      })
      return frames.every((f, i) => f.equals(Buffer.from(reference(events[i]!, 3))))
    }),
    { numRuns: 500 }
  )
})
