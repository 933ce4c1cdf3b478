import type { Test } from 'tap'
import { INTERRUPTED_MESSAGE } from '../../runtime/interactions/store-input.js'

const NOT_STORED = { code: 'PLT_ERR_INTERACTION_NOT_STORED' }
import { type IdempotencyClaim, type InteractionStore, type StepType } from '../../runtime/interactions/types.js'
import { type InteractionHeader, type InteractionStep } from '../../runtime/interactions/index.js'
import { INTERACTION_ERRORS } from '../../runtime/interactions/errors.js'
import { isPlatformError } from '../../runtime/contracts/index.js'

/**
 * What a store test gives the contract: `open()` returns a store over this fixture's data; the
 * first call finds it empty, a later call (after `stop()`) is the same data seen by a restarted
 * process.
 */
export interface StoreFixture {
  open(): Promise<InteractionStore>
  /**
   * A store of another node (`node`) over the same data, open beside the last `open()`'s, as a
   * second process on one database is (not started; the caller starts and stops it).
   */
  peer(node: string, opts?: { leaseMs?: number }): Promise<InteractionStore>
}

/** The node every fixture's `open()` stores as. */
export const FIXTURE_NODE = 'node-a'

const isEnded = (e: unknown) => isPlatformError(e, INTERACTION_ERRORS.INTERACTION_ENDED)
/** What a write refused after the run's end rejects with. */
const ENDED = { code: INTERACTION_ERRORS.INTERACTION_ENDED.code, status: 409 }

const WIRE_ORDER = [
  'id',
  'parentId',
  'conversationId',
  'agentId',
  'userId',
  'model',
  'status',
  'background',
  'store',
  'steps',
  'finalText',
  'usage',
  'errorMessage',
  'createdAt',
  'updatedAt'
]

let clock = Date.parse('2026-01-01T00:00:00.000Z')

export function header(id: string, over: Partial<InteractionHeader> = {}): InteractionHeader {
  const at = new Date((clock += 1000)).toISOString()
  return {
    id,
    parentId: null,
    conversationId: 'conv-1',
    agentId: null,
    userId: 'alice',
    model: 'demo',
    status: 'RUNNING',
    background: false,
    store: true,
    finalText: null,
    usage: null,
    errorMessage: null,
    createdAt: at,
    updatedAt: at,
    ...over
  }
}

export function step(seq: number, type: StepType = 'text', text: string | null = `t${seq}`): InteractionStep {
  return { seq, type, text, toolName: null, data: {}, usage: null, createdAt: new Date(clock).toISOString() }
}

/** The store contract, run unchanged against every implementation. */
/** `label` names the suite when one kind of store runs it in more than one configuration. */
export function runStoreContract(t: Test, kind: string, make: (t: Test) => Promise<StoreFixture>, label = kind): void {
  async function started(t: Test): Promise<{ s: InteractionStore; fixture: StoreFixture }> {
    const fixture = await make(t)
    const s = await fixture.open()
    t.equal(await s.start(), 0, 'a new store has no interrupted run')
    t.teardown(() => s.stop())
    return { s, fixture }
  }

  t.test(`${label}: interaction store contract`, async (t) => {
    t.test('save then load: the record in wire order, no steps yet; a copy', async (t) => {
      const { s } = await started(t)
      t.equal(s.kind, kind)
      t.equal(await s.load('nope'), undefined, 'unknown id')
      const h = header('int-a', {
        agentId: 'helper',
        usage: { input: 3, output: 4, cachedInput: 0, total: 7, model: 'demo' }
      })
      await s.save(h)
      const got = await s.load('int-a')
      t.same(got, { ...h, steps: [] })
      t.same(Object.keys(got!), WIRE_ORDER, 'fields in wire order')
      h.status = 'COMPLETED'
      t.equal((await s.load('int-a'))!.status, 'RUNNING', 'mutating the saved object changes nothing kept')
      got!.status = 'FAILED'
      t.equal((await s.load('int-a'))!.status, 'RUNNING', 'mutating a loaded record changes nothing kept')
    })

    t.test('save replaces the header and leaves the steps alone', async (t) => {
      const { s } = await started(t)
      const h = header('int-b')
      await s.save(h)
      await s.appendStep('int-b', step(0))
      await s.save({ ...h, status: 'COMPLETED', finalText: 'done', updatedAt: '2026-02-01T00:00:00.000Z' })
      const got = (await s.load('int-b'))!
      t.equal(got.status, 'COMPLETED')
      t.equal(got.finalText, 'done')
      t.equal(got.updatedAt, '2026-02-01T00:00:00.000Z')
      t.same(got.steps, [step(0)])
    })

    t.test('appendStep and steps(after, limit): seq order, resume from any seq', async (t) => {
      const { s } = await started(t)
      await s.save(header('int-c'))
      const rich: InteractionStep = {
        seq: 0,
        type: 'tool-call',
        text: null,
        toolName: 'lookup',
        data: { arguments: { q: 'héllo ✓ 🚀', n: [1, 2.5, null], deep: { z: 1, a: 2 } } },
        usage: null,
        createdAt: '2026-01-01T00:00:00.000Z'
      }
      await s.appendStep('int-c', rich)
      for (let i = 1; i < 6; i++) await s.appendStep('int-c', step(i))
      const usage = { input: 1, output: 2, cachedInput: 0, total: 3, model: 'm' }
      await s.appendStep('int-c', { ...step(6, 'usage', null), usage })
      const all = await s.steps('int-c', -1)
      t.same(
        all.map((x) => x.seq),
        [0, 1, 2, 3, 4, 5, 6]
      )
      t.same(all[0], rich, 'structured data round-trips')
      t.same(Object.keys(all[0]!.data.arguments as object), ['q', 'n', 'deep'], 'object key order kept')
      t.same(Object.keys(all[0]!), ['seq', 'type', 'text', 'toolName', 'data', 'usage', 'createdAt'])
      t.same(all[6]!.usage, usage)
      t.same(
        (await s.steps('int-c', 3)).map((x) => x.seq),
        [4, 5, 6]
      )
      t.same(
        (await s.steps('int-c', 1, 2)).map((x) => x.seq),
        [2, 3]
      )
      t.same(await s.steps('int-c', 6), [], 'nothing after the last')
      t.same(await s.steps('int-c', 2, 0), [])
      t.same(await s.steps('int-unknown', -1), [], 'an unknown id has no steps')
      t.same(
        (await s.load('int-c'))!.steps.map((x) => x.seq),
        [0, 1, 2, 3, 4, 5, 6]
      )
    })

    t.test('a second write of a seq is ignored, concurrent or not', async (t) => {
      const { s } = await started(t)
      await s.save(header('int-d'))
      await s.appendStep('int-d', step(0, 'text', 'first'))
      await s.appendStep('int-d', step(0, 'text', 'second'))
      await Promise.all(Array.from({ length: 60 }, (_, i) => s.appendStep('int-d', step(1 + (i % 30)))))
      const got = await s.steps('int-d', -1)
      t.equal(got[0]!.text, 'first')
      t.same(
        got.map((x) => x.seq),
        Array.from({ length: 31 }, (_, i) => i),
        'every seq once, in order'
      )
    })

    t.test('a burst of appends: each acknowledged in seq order once stored, none after the end', async (t) => {
      const { s } = await started(t)
      await s.save(header('int-burst'))
      const end = 400
      const acked: number[] = []
      const refused: number[] = []
      const unreadable: number[] = []
      const reads: Promise<void>[] = []
      // issued at once, as a run issues its steps without waiting: a store may write them together
      const writes = Array.from({ length: end + 50 }, (_, i) =>
        s.appendStep('int-burst', i === end ? step(i, 'completion', 'done') : step(i)).then(
          () => {
            acked.push(i)
            // acknowledged means stored: a read issued now finds it
            reads.push(
              s.steps('int-burst', i - 1, 1).then((got) => {
                if (got[0]?.seq !== i) unreadable.push(i)
              })
            )
          },
          (e: unknown) => {
            if (!isEnded(e)) throw e
            refused.push(i)
          }
        )
      )
      await Promise.all(writes)
      await Promise.all(reads)
      const upTo = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i)
      t.same(acked, upTo(0, end + 1), 'acknowledged in seq order, up to and including the terminal step')
      t.same(unreadable, [], 'each acknowledged step was readable when acknowledged')
      t.same(
        refused.sort((a, b) => a - b),
        upTo(end + 1, end + 50),
        'the steps after the terminal one are refused'
      )
      t.same(
        (await s.steps('int-burst', -1)).map((x) => x.seq),
        upTo(0, end + 1)
      )
    })

    t.test('a step for an interaction not stored is refused and kept nowhere', async (t) => {
      const { s } = await started(t)
      await t.rejects(s.appendStep('int-ghost', step(0)), NOT_STORED)
      await s.save(header('int-ghost'))
      t.same(await s.steps('int-ghost', -1), [], 'no orphan step shows up once the id exists')
    })

    t.test('list: newest first, paged by opaque cursors, owner always applied', async (t) => {
      const { s } = await started(t)
      const mine: string[] = []
      for (let i = 0; i < 7; i++) {
        await s.save(header(`int-l${i}`))
        mine.unshift(`int-l${i}`)
        await s.save(header(`int-o${i}`, { userId: 'bob' }))
      }
      // two in the same millisecond: the id breaks the tie, and paging still splits them cleanly
      const same = header('int-same-a')
      await s.save(same)
      await s.save({ ...same, id: 'int-same-b' })
      mine.unshift('int-same-b', 'int-same-a')
      const seen: string[] = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = await s.list({ userId: 'alice', limit: 4, ...(cursor === undefined ? {} : { cursor }) })
        pages++
        t.ok(page.items.length <= 4)
        for (const item of page.items) {
          t.equal(item.userId, 'alice')
          t.notOk('steps' in item, 'list gives headers')
        }
        seen.push(...page.items.map((x) => x.id))
        cursor = page.nextCursor
        if (cursor !== undefined) t.match(cursor, /^[A-Za-z0-9_-]+$/, 'base64url')
      } while (cursor !== undefined && pages < 10)
      t.same(seen, mine, 'every one of alice, once, newest first')
      t.equal(pages, 3)
      const exact = await s.list({ userId: 'alice', limit: 9 })
      t.equal(exact.items.length, 9)
      t.equal(exact.nextCursor, undefined, 'a page that ends the list has no cursor')
      t.same((await s.list({ userId: 'carol', limit: 50 })).items, [], 'no one else sees them')
      t.same(
        Object.keys(exact.items[0]!),
        WIRE_ORDER.filter((k) => k !== 'steps')
      )
    })

    t.test('list: a cursor keeps its place while newer ones arrive; a bad one is refused', async (t) => {
      const { s } = await started(t)
      for (let i = 0; i < 4; i++) await s.save(header(`int-p${i}`))
      const first = await s.list({ userId: 'alice', limit: 2 })
      t.same(
        first.items.map((x) => x.id),
        ['int-p3', 'int-p2']
      )
      await s.save(header('int-p4'))
      const second = await s.list({ userId: 'alice', limit: 2, cursor: first.nextCursor! })
      t.same(
        second.items.map((x) => x.id),
        ['int-p1', 'int-p0']
      )
      for (const bad of ['', 'x', Buffer.from('[1,2]').toString('base64url'), Buffer.from('{}').toString('base64')])
        await t.rejects(
          s.list({ userId: 'alice', limit: 2, cursor: bad }),
          { code: 'PLT_ERR_INTERACTION_CURSOR_INVALID' },
          `cursor ${bad}`
        )
    })

    t.test('list: conversation filter, still scoped to the owner', async (t) => {
      const { s } = await started(t)
      await s.save(header('int-c1', { conversationId: 'conv-x' }))
      await s.save(header('int-c2', { conversationId: 'conv-y' }))
      await s.save(header('int-c3', { conversationId: 'conv-x' }))
      await s.save(header('int-c4', { conversationId: 'conv-x', userId: 'bob' }))
      const page = await s.list({ userId: 'alice', conversationId: 'conv-x', limit: 1 })
      t.same(
        page.items.map((x) => x.id),
        ['int-c3']
      )
      const rest = await s.list({ userId: 'alice', conversationId: 'conv-x', limit: 5, cursor: page.nextCursor! })
      t.same(
        rest.items.map((x) => x.id),
        ['int-c1']
      )
      t.equal(rest.nextCursor, undefined)
      // a header saved again under another conversation moves: no ghost left in the old one
      await s.save(header('int-c1', { conversationId: 'conv-y', createdAt: '2026-01-01T00:00:00.000Z' }))
      t.same(
        (await s.list({ userId: 'alice', conversationId: 'conv-x', limit: 5 })).items.map((x) => x.id),
        ['int-c3']
      )
      t.same(
        (await s.list({ userId: 'alice', conversationId: 'conv-y', limit: 5 })).items.map((x) => x.id),
        ['int-c2', 'int-c1']
      )
    })

    t.test('delete removes the record and its steps', async (t) => {
      const { s } = await started(t)
      await s.save(header('int-del'))
      await s.appendStep('int-del', step(0))
      await s.appendStep('int-del', step(1))
      await s.save(header('int-keep'))
      t.equal(await s.delete('int-del'), true)
      t.equal(await s.delete('int-del'), false, 'gone already')
      t.equal(await s.load('int-del'), undefined)
      t.same(await s.steps('int-del', -1), [])
      t.same(
        (await s.list({ userId: 'alice', limit: 10 })).items.map((x) => x.id),
        ['int-keep']
      )
      await s.save(header('int-del'))
      t.same((await s.load('int-del'))!.steps, [], 'the same id saved again starts with no steps')
      await t.rejects(s.appendStep('int-gone', step(0)), NOT_STORED)
    })

    t.test('a delete racing appends leaves no step behind', async (t) => {
      const { s } = await started(t)
      await s.save(header('int-race'))
      await s.appendStep('int-race', step(0))
      const appends = Array.from({ length: 40 }, (_, i) =>
        s.appendStep('int-race', step(1 + i)).then(
          () => 'stored',
          (e: unknown) => ((e as { code?: unknown }).code === NOT_STORED.code ? 'refused' : e)
        )
      )
      // concurrent with the appends: either order is fine, as long as no step outlives the record
      t.equal(await s.delete('int-race'), true)
      await t.rejects(s.appendStep('int-race', step(41)), NOT_STORED, 'an append after the delete is refused')
      for (const outcome of await Promise.all(appends)) t.ok(outcome === 'stored' || outcome === 'refused')
      await s.save(header('int-race'))
      t.same(await s.steps('int-race', -1), [], 'nothing of the deleted run comes back')
    })

    t.test('start marks every RUNNING or CREATED run FAILED, with one terminal step', async (t) => {
      const fixture = await make(t)
      const first = await fixture.open()
      await first.start()
      await first.save(header('int-run'))
      await first.appendStep('int-run', step(0))
      await first.appendStep('int-run', step(1))
      await first.save(header('int-new', { status: 'CREATED' }))
      const done = header('int-done', { status: 'COMPLETED', finalText: 'ok' })
      await first.save(done)
      await first.stop()

      const second = await fixture.open()
      t.teardown(() => second.stop())
      t.equal(await second.start(), 2, 'two runs were in flight')
      const run = (await second.load('int-run'))!
      t.equal(run.status, 'FAILED')
      t.equal(run.errorMessage, INTERRUPTED_MESSAGE)
      t.ok(run.updatedAt > run.createdAt, 'updatedAt moves')
      t.same(
        run.steps.map((x) => [x.seq, x.type, x.text]),
        [
          [0, 'text', 't0'],
          [1, 'text', 't1'],
          [2, 'error', INTERRUPTED_MESSAGE]
        ],
        'the steps before the crash, then the terminal error step'
      )
      const created = (await second.load('int-new'))!
      t.equal(created.status, 'FAILED')
      t.same(
        created.steps.map((x) => [x.seq, x.type]),
        [[0, 'error']]
      )
      t.same(await second.load('int-done'), { ...done, steps: [] }, 'a finished run is untouched')
      await second.stop()
      const third = await fixture.open()
      t.equal(await third.start(), 0, 'marked once')
      await third.stop()
    })

    t.test('start marks only the runs of its own node: another live node keeps its own', async (t) => {
      const fixture = await make(t)
      const a = await fixture.open()
      await a.start()
      await a.save(header('int-mine'))
      await a.appendStep('int-mine', step(0))
      const b = await fixture.peer('node-b')
      t.equal(await b.start(), 0, "a node starting beside a live one marks none of that one's runs")
      t.equal((await b.load('int-mine'))!.status, 'RUNNING')
      await b.save(header('int-theirs'))
      await b.appendStep('int-theirs', step(0))
      await a.appendStep('int-mine', step(1, 'completion', 'done'))
      await a.save({ ...header('int-mine'), status: 'COMPLETED', finalText: 'done' })
      t.same(
        (await b.load('int-mine'))!.steps.map((x) => x.type),
        ['text', 'completion'],
        'the run went on and ended once'
      )
      await b.stop()
      await a.stop()
      const restarted = await fixture.open()
      t.teardown(() => restarted.stop())
      t.equal(await restarted.start(), 0, "node-a's restart leaves node-b's run alone")
      t.equal((await restarted.load('int-theirs'))!.status, 'RUNNING')
      const other = await fixture.peer('node-b')
      t.equal(await other.start(), 1, "node-b's restart marks its own run")
      await other.stop()
      t.equal((await restarted.load('int-theirs'))!.status, 'FAILED')
    })

    t.test(
      'a run ends once: a second terminal step, a step after it, a header over an ended one are refused',
      async (t) => {
        const { s } = await started(t)
        await s.save(header('int-end'))
        await s.appendStep('int-end', step(0))
        await s.appendStep('int-end', step(1, 'completion', 'ok'))
        await s.appendStep('int-end', step(1, 'completion', 'ok'))
        t.pass('a retry of the terminal step itself is ignored like any repeated seq')
        await t.rejects(s.appendStep('int-end', step(2, 'error', 'late')), ENDED, 'a second terminal step')
        await t.rejects(s.appendStep('int-end', step(3)), ENDED, 'a step after the terminal one')
        await s.save({ ...header('int-end'), status: 'COMPLETED', finalText: 'ok' })
        await t.rejects(
          s.save({ ...header('int-end'), status: 'FAILED', errorMessage: 'interrupted' }),
          ENDED,
          'a second terminal header'
        )
        await t.rejects(s.save(header('int-end')), ENDED, 'an ended run is not made live again')
        await t.rejects(s.appendStep('int-end', step(4)), ENDED)
        const got = (await s.load('int-end'))!
        t.equal(got.status, 'COMPLETED')
        t.same(
          got.steps.map((x) => [x.seq, x.type]),
          [
            [0, 'text'],
            [1, 'completion']
          ],
          'one terminal step, nothing after it'
        )
        await s.save(header('int-ended-header', { status: 'CANCELLED' }))
        await t.rejects(s.appendStep('int-ended-header', step(0)), ENDED, 'no step once the header has ended')
        t.equal(ENDED.code, 'PLT_ERR_INTERACTION_ENDED', 'a clear code')
      }
    )

    t.test('two nodes racing to end one run: exactly one terminal step and one terminal header', async (t) => {
      const fixture = await make(t)
      const a = await fixture.open()
      await a.start()
      t.teardown(() => a.stop())
      const b = await fixture.peer('node-b')
      await b.start()
      t.teardown(() => b.stop())
      for (let round = 0; round < 5; round++) {
        const id = `int-duel-${round}`
        await a.save(header(id))
        await a.appendStep(id, step(0))
        const ends = await Promise.allSettled([
          a.appendStep(id, step(1, 'completion', 'a')),
          b.appendStep(id, step(2, 'error', 'b')),
          a.appendStep(id, step(3, 'error', 'a again')),
          b.appendStep(id, step(4, 'completion', 'b again'))
        ])
        t.equal(ends.filter((e) => e.status === 'fulfilled').length, 1, `round ${round}: one terminal step stored`)
        for (const e of ends) if (e.status === 'rejected') t.ok(isEnded(e.reason), 'the losers are refused as ended')
        const headers = await Promise.allSettled([
          a.save({ ...header(id), status: 'COMPLETED' }),
          b.save({ ...header(id), status: 'FAILED' })
        ])
        t.equal(headers.filter((e) => e.status === 'fulfilled').length, 1, `round ${round}: one terminal header`)
        const got = (await a.load(id))!
        t.equal(got.steps.filter((x) => x.type === 'completion' || x.type === 'error').length, 1)
        t.equal(got.steps.length, 2)
      }
    })

    t.test('an owner that died between its terminal step and header: marked, still one terminal step', async (t) => {
      const fixture = await make(t)
      const first = await fixture.open()
      await first.start()
      await first.save(header('int-half'))
      await first.appendStep('int-half', step(0, 'completion', 'ok'))
      await first.stop()
      const second = await fixture.open()
      t.teardown(() => second.stop())
      t.equal(await second.start(), 1)
      const got = (await second.load('int-half'))!
      t.equal(got.status, 'FAILED')
      t.same(
        got.steps.map((x) => x.type),
        ['completion'],
        'no second terminal step'
      )
    })

    t.test('saveKeyed: the first claim of a key saves; another is refused with the holder', async (t) => {
      const { s } = await started(t)
      const now = Date.parse('2026-01-01T00:00:00.000Z')
      const claim = { key: 'order-42', fingerprint: 'fp-1', expiresAt: now + 60_000 }
      const first = header('int-k1')
      t.equal(await s.saveKeyed(first, claim, now), undefined, 'claimed')
      t.same(await s.load('int-k1'), { ...first, steps: [] }, 'the header is saved with it')
      const record = {
        userId: 'alice',
        key: 'order-42',
        fingerprint: 'fp-1',
        interactionId: 'int-k1',
        expiresAt: now + 60_000
      }
      t.same(await s.findKey('alice', 'order-42', now), record)
      t.same(
        await s.saveKeyed(header('int-k2'), { ...claim, fingerprint: 'fp-2' }, now + 1),
        record,
        'a held key: the holder comes back'
      )
      t.equal(await s.load('int-k2'), undefined, 'and nothing was written')
      t.same(
        (await s.list({ userId: 'alice', limit: 10 })).items.map((x) => x.id),
        ['int-k1']
      )
      t.equal(await s.saveKeyed(header('int-k3', { userId: 'bob' }), claim, now), undefined, 'keys are per owner')
      t.equal((await s.findKey('bob', 'order-42', now))?.interactionId, 'int-k3')
      t.equal(await s.findKey('alice', 'order-43', now), undefined, 'an unknown key')
      await s.appendStep('int-k1', step(0))
      t.equal((await s.load('int-k1'))!.steps.length, 1, 'a keyed record takes steps like any other')
    })

    t.test('keys survive a restart, expire, and go with their interaction', async (t) => {
      const fixture = await make(t)
      const first = await fixture.open()
      await first.start()
      const now = Date.parse('2026-01-01T00:00:00.000Z')
      const claim = { key: 'k', fingerprint: 'fp', expiresAt: now + 1000 }
      await first.saveKeyed(header('int-old', { status: 'COMPLETED' }), claim, now)
      await first.stop()
      const s = await fixture.open()
      t.teardown(() => s.stop())
      await s.start()
      t.equal((await s.findKey('alice', 'k', now + 999))?.interactionId, 'int-old', 'kept across the restart')
      t.equal(await s.findKey('alice', 'k', now + 1000), undefined, 'expired at expiresAt')
      const later = { ...claim, fingerprint: 'fp-new', expiresAt: now + 5000 }
      t.equal(await s.saveKeyed(header('int-new'), later, now + 1000), undefined, 'an expired key is taken over')
      t.same(await s.findKey('alice', 'k', now + 1000), {
        userId: 'alice',
        key: 'k',
        fingerprint: 'fp-new',
        interactionId: 'int-new',
        expiresAt: now + 5000
      })
      t.equal((await s.load('int-old'))?.status, 'COMPLETED', 'the old interaction stays')
      t.equal(await s.delete('int-old'), true)
      t.equal((await s.findKey('alice', 'k', now))?.interactionId, 'int-new', 'deleting the old holder frees nothing')
      t.equal(await s.delete('int-new'), true)
      t.equal(await s.findKey('alice', 'k', now), undefined, 'the key went with its interaction')
      t.equal(await s.saveKeyed(header('int-again'), later, now), undefined, 'and may start another')
    })

    t.test('concurrent claims of one key: exactly one saves', async (t) => {
      const { s } = await started(t)
      const now = Date.now()
      const claim = { key: 'race', fingerprint: 'fp', expiresAt: now + 60_000 }
      const ids = Array.from({ length: 12 }, (_, i) => `int-race-${i}`)
      const outcomes = await Promise.all(ids.map((id) => s.saveKeyed(header(id), claim, now)))
      const winners = ids.filter((_, i) => outcomes[i] === undefined)
      t.equal(winners.length, 1, 'one claim won')
      for (const o of outcomes) if (o !== undefined) t.equal(o.interactionId, winners[0], 'the rest name the winner')
      t.same(
        (await s.list({ userId: 'alice', limit: 50 })).items.map((x) => x.id),
        winners,
        'only the winner is stored'
      )
    })

    t.test('bad input: a clear error and nothing changes', async (t) => {
      const { s } = await started(t)
      const h = header('int-ok')
      await s.save(h)
      const badHeaders: [unknown, RegExp][] = [
        [{ ...h, id: 'bad id' }, /interaction id/],
        [{ ...h, id: 'x'.repeat(129) }, /interaction id/],
        [{ ...h, status: 'DONE' }, /status/],
        [{ ...h, userId: '' }, /userId/],
        [{ ...h, conversationId: 7 }, /conversationId/],
        [{ ...h, usage: 'lots' }, /usage/],
        [{ ...h, createdAt: undefined }, /createdAt/],
        [null, /object/]
      ]
      for (const [bad, error] of badHeaders) await t.rejects(s.save(bad as InteractionHeader), error)
      const badSteps: [unknown, RegExp][] = [
        [{ ...step(0), seq: -1 }, /seq/],
        [{ ...step(0), seq: 1.5 }, /seq/],
        [{ ...step(0), type: 'chat' }, /type/],
        [{ ...step(0), data: null }, /data/],
        [{ ...step(0), data: [] }, /data/]
      ]
      for (const [bad, error] of badSteps) await t.rejects(s.appendStep('int-ok', bad as InteractionStep), error)
      await t.rejects(s.appendStep('../x', step(0)), /interaction id/)
      await t.rejects(s.steps('int-ok', -2), /after/)
      await t.rejects(s.load('a/b'), /interaction id/)
      await t.rejects(s.delete(''), /interaction id/)
      for (const limit of [0, 501, 2.5]) await t.rejects(s.list({ userId: 'alice', limit }), /limit/)
      await t.rejects(s.list({ userId: '', limit: 5 }), /userId/)
      const now = Date.now()
      const claim = { key: 'k', fingerprint: 'fp', expiresAt: now + 1000 }
      const badClaims: [unknown, RegExp][] = [
        [{ ...claim, key: 'has space' }, /idempotency key/],
        [{ ...claim, key: '' }, /idempotency key/],
        [{ ...claim, fingerprint: '' }, /fingerprint/],
        [{ ...claim, expiresAt: 'soon' }, /expiresAt/],
        [null, /object/]
      ]
      for (const [bad, error] of badClaims)
        await t.rejects(s.saveKeyed(header('int-bad'), bad as IdempotencyClaim, now), error)
      await t.rejects(s.saveKeyed({ ...h, id: 'bad id' }, claim, now), /interaction id/)
      await t.rejects(s.findKey('alice', 'x'.repeat(256), now), /idempotency key/)
      await t.rejects(s.findKey('', 'k', now), /userId/)
      t.equal(await s.load('int-bad'), undefined, 'no refused claim saved its header')
      t.same(await s.load('int-ok'), { ...h, steps: [] }, 'the record is unchanged')
      t.same(
        (await s.list({ userId: 'alice', limit: 500 })).items.map((x) => x.id),
        ['int-ok']
      )
    })

    // stores several nodes share own their runs through leases; one process's stores have none
    t.test('leases: a lost node’s run ends once, its stale-epoch writes are refused', async (t) => {
      const fixture = await make(t)
      const probe = await fixture.open()
      if (probe.leases === undefined) {
        t.pass(`${kind} holds one process's data: no leases`)
        return
      }
      // node-a's leases last 100 ms and it never renews them: it is lost
      const a = await fixture.peer('node-a', { leaseMs: 100 })
      const b = await fixture.peer('node-b', { leaseMs: 60_000 })
      const c = await fixture.peer('node-c', { leaseMs: 60_000 })
      for (const x of [a, b, c]) {
        await x.start()
        t.teardown(() => x.stop())
      }
      await a.save(header('int-lost'))
      await a.appendStep('int-lost', step(0))
      await c.save(header('int-kept'))
      let swept: InteractionHeader[] = []
      for (let i = 0; i < 500 && swept.length === 0; i++) {
        swept = await b.leases!.sweep()
        if (swept.length === 0) await new Promise((r) => setTimeout(r, 10))
      }
      t.same(
        swept.map((h) => [h.id, h.status, h.errorMessage]),
        [['int-lost', 'FAILED', 'interrupted: node lost']],
        'the expired lease is swept; a lease still held is not'
      )
      // (its seq 1 is the sweeper's terminal step now, and a seq written twice is ignored)
      await t.rejects(a.appendStep('int-lost', step(2)), ENDED, "the lost owner's next step is refused")
      await t.rejects(a.save({ ...header('int-lost'), status: 'COMPLETED' }), ENDED, 'and its terminal header')
      t.same(await a.leases!.renew(['int-lost']), { lost: ['int-lost'], cancelled: [] }, 'its renewal says so')
      const lost = (await b.load('int-lost'))!
      t.same(
        lost.steps.map((x) => [x.seq, x.type, x.text]),
        [
          [0, 'text', 't0'],
          [1, 'error', 'interrupted: node lost']
        ],
        'one terminal step, after the last stored one'
      )
      t.same(await b.leases!.sweep(), [], 'swept once')
      t.equal((await b.load('int-kept'))!.status, 'RUNNING')

      // a cancel made on another node is persisted; the owner finds it when it renews
      t.equal(await b.leases!.requestCancel('int-kept', 'bob'), undefined, "not bob's run")
      t.equal(await b.leases!.requestCancel('int-lost', 'alice'), undefined, 'an ended run')
      t.equal(await b.leases!.requestCancel('int-kept', 'alice'), 'node-c', 'the owner named')
      t.same(await c.leases!.renew(['int-kept']), { lost: [], cancelled: ['int-kept'] })
      t.same(
        (await b.leases!.ended(['int-kept', 'int-lost', 'int-unknown'])).map((h) => h.id),
        ['int-lost'],
        'of watched runs, those ended'
      )
    })
  })
}
