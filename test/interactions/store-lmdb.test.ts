import t, { type Test } from 'tap'
import { killWriterAfter, lastAcked } from '../helpers/kill-writer.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LmdbInteractionStore } from '../../runtime/interactions/index.js'
import { Store } from '../../runtime/store/index.js'
import { INTERACTION_ERRORS } from '../../runtime/interactions/errors.js'
import { FIXTURE_NODE, header, runStoreContract, step, type StoreFixture } from './store-contract.js'

const ENDED = { code: INTERACTION_ERRORS.INTERACTION_ENDED.code }
// how the store opens its step databases
const SHARED = { shareStructures: true }
const PACKED = { compress: true, shareStructures: true }
// ended runs packed into one record: off by default (platform.interactions.lmdb.pack-ended)
const PACKING = { packEnded: true }

function tempDir(t: Test, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `platform-${name}-`))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

// each open() closes the previous environment and opens the directory afresh: a real restart
const fixture =
  (groupCommitMs = 0) =>
  async (t: Test): Promise<StoreFixture> => {
    const dir = tempDir(t, 'istore')
    let env: Store | undefined
    t.teardown(() => env?.close())
    return {
      async open() {
        await env?.close()
        env = new Store(dir)
        return new LmdbInteractionStore(env, { node: FIXTURE_NODE, groupCommitMs })
      },
      // a second store object on the open environment stands for a second process on the directory
      async peer(node) {
        return new LmdbInteractionStore(env!, { node, groupCommitMs })
      }
    }
  }
runStoreContract(t, 'lmdb', fixture())
// the same with the commit window the platform runs with by default
// (platform.interactions.lmdb.group-commit-ms): steps wait for it, nothing else changes
runStoreContract(t, 'lmdb', fixture(10), 'lmdb with a commit window')

t.test('lmdb: ids that prefix each other keep their steps and lists apart', async (t) => {
  const env = new Store(tempDir(t, 'istore-prefix'))
  t.teardown(() => env.close())
  const s = new LmdbInteractionStore(env)
  await s.start()
  for (const id of ['int-a', 'int-ab', 'int-a-b']) {
    await s.save(header(id, { userId: id === 'int-ab' ? 'al' : 'alice' }))
    await s.appendStep(id, step(0, 'text', id))
  }
  await s.save(header('int-x', { userId: 'alice-2' }))
  t.same(
    (await s.steps('int-a', -1)).map((x) => x.text),
    ['int-a']
  )
  t.equal(await s.delete('int-a'), true)
  t.same(
    (await s.steps('int-ab', -1)).map((x) => x.text),
    ['int-ab']
  )
  t.same(
    (await s.list({ userId: 'alice', limit: 10 })).items.map((x) => x.id),
    ['int-a-b']
  )
  t.same(
    (await s.list({ userId: 'al', limit: 10 })).items.map((x) => x.id),
    ['int-ab']
  )
})

// A child appends steps through the real LMDB store and prints each acknowledged seq; the parent
// kills it with SIGKILL. Every acknowledged step must be there when the directory is reopened,
// and start() must then mark the run FAILED after them.
const child = `
const { Store } = await import(${JSON.stringify(new URL('../../dist/runtime/store/index.js', import.meta.url).href)})
const { LmdbInteractionStore } = await import(${JSON.stringify(new URL('../../dist/runtime/interactions/index.js', import.meta.url).href)})
const s = new LmdbInteractionStore(new Store(process.argv[1]))
await s.start()
const at = new Date().toISOString()
await s.save({ id: 'int-kill', parentId: null, conversationId: 'c', agentId: null, userId: 'u', model: null,
  status: 'RUNNING', background: true, store: true, finalText: null, usage: null, errorMessage: null,
  createdAt: at, updatedAt: at })
for (let seq = 0; ; seq++) {
  await s.appendStep('int-kill', { seq, type: 'text', text: 'delta ' + seq, toolName: null, data: {}, usage: null,
    createdAt: new Date().toISOString() })
  process.stdout.write(seq + '\\n')
}
`

t.test('lmdb: an acknowledged step survives SIGKILL of the writer', async (t) => {
  for (let round = 0; round < 2; round++) {
    const dir = tempDir(t, 'istore-kill')
    const acked = lastAcked(await killWriterAfter(child, dir, 40 + round * 150 + 1))
    t.ok(acked >= 40, `round ${round}: ${acked + 1} steps acknowledged before the kill`)
    const env = new Store(dir)
    const s = new LmdbInteractionStore(env)
    t.equal(await s.start(), 1, 'the killed run is marked')
    const run = (await s.load('int-kill'))!
    const seqs = run.steps.map((x) => x.seq)
    t.same(
      seqs.slice(0, acked + 1),
      Array.from({ length: acked + 1 }, (_, i) => i),
      `round ${round}: every acknowledged step is there, in order`
    )
    t.same(
      seqs,
      Array.from({ length: seqs.length }, (_, i) => i),
      'no gap'
    )
    t.equal(run.status, 'FAILED')
    t.equal(run.steps.at(-1)!.type, 'error', 'the terminal step follows the last one written')
    await env.close()
  }
})

// With a commit window, a group waits until the window after the previous one was issued: steps
// of several event turns go in one commit, one record per run, none acknowledged before it. A step
// after a quiet spell goes at once, and a write that must follow the steps (a terminal step, a
// save, a stop) flushes them at once rather than waiting for the window.
t.test(
  'lmdb: with a commit window, steps of several event turns wait for one commit; other writes never wait',
  async (t) => {
    const env = new Store(tempDir(t, 'istore-window-group'))
    t.teardown(() => env.close())
    const s = new LmdbInteractionStore(env, { groupCommitMs: 600_000 })
    await s.start()
    await s.save(header('int-w'))
    const stepsDb = env.db<{ seq: number } | { seq: number }[], [string, number]>('interaction-steps', SHARED)
    const records = () => [...stepsDb.getRange({ start: ['int-w', -1], end: ['int-w', Number.MAX_SAFE_INTEGER] })]
    // nothing was issued within the window: the first step goes in the event turn that made it
    await s.appendStep('int-w', step(0))
    const acked: number[] = []
    const held: Promise<void>[] = []
    for (let seq = 1; seq <= 5; seq++) {
      held.push(s.appendStep('int-w', step(seq)).then(() => void acked.push(seq)))
      await new Promise((r) => setImmediate(r))
    }
    await new Promise((r) => setTimeout(r, 100))
    t.same(acked, [], 'steps made within the window are not acknowledged before their commit')
    t.same(
      records().map(({ key }) => key[1]),
      [0],
      'and not written yet'
    )
    // a terminal step is ordered behind them: it flushes them now, not after ten minutes
    await s.appendStep('int-w', step(6, 'completion', 'done'))
    await Promise.all(held)
    t.same(acked, [1, 2, 3, 4, 5], 'acknowledged by the commit the terminal step forced, in order')
    t.same(
      records()
        .filter(({ value }) => Array.isArray(value))
        .map(({ key, value }) => [key[1], (value as { seq: number }[]).map((x) => x.seq)]),
      [[5, [1, 2, 3, 4, 5]]],
      'the steps of five event turns are one record, keyed by the last seq it holds'
    )
    t.same(
      (await s.load('int-w'))!.steps.map((x) => x.seq),
      [0, 1, 2, 3, 4, 5, 6]
    )
    // a save is another write: held steps go before it, whatever the window
    await s.save(header('int-w2'))
    const waiting = [s.appendStep('int-w2', step(0)), s.appendStep('int-w2', step(1))]
    await s.save(header('int-w3'))
    await Promise.all(waiting)
    t.pass('a save flushes the steps held for the window')
    // stopping the store writes what waits for the window
    const last = s.appendStep('int-w2', step(2))
    await s.stop()
    await last
    t.same(
      (await s.steps('int-w2', -1, 10)).map((x) => x.seq),
      [0, 1, 2],
      'a stop flushes the steps held for the window'
    )
  }
)

// Steps appended while a commit is in flight wait and go to the writer together once it lands (one
// transaction for them all); each is acknowledged by its own group's commit, so an acknowledged
// step reads back, and every other write queues behind the steps appended before it.
t.test('lmdb: steps appended while a commit is in flight go together, each acknowledged once durable', async (t) => {
  const env = new Store(tempDir(t, 'istore-group'))
  t.teardown(() => env.close())
  const s = new LmdbInteractionStore(env)
  await s.start()
  await s.save(header('int-g'))
  await s.save(header('int-del'))
  const stepsDb = env.db<{ seq: number } | { seq: number }[], [string, number]>('interaction-steps', SHARED)
  // a record holds one step, or the run's steps of one group keyed by the last seq it holds
  const records = (id: string) => [...stepsDb.getRange({ start: [id, -1], end: [id, Number.MAX_SAFE_INTEGER] })]
  const storedStep = (seq: number): boolean =>
    [...stepsDb.getRange({ start: ['int-g', seq], end: ['int-g', Number.MAX_SAFE_INTEGER], limit: 1 })].some(
      ({ value }) => [value].flat().some((x) => x.seq === seq)
    )
  const order: number[] = []
  const unread: number[] = []
  const append = (seq: number): Promise<void> => {
    const p = s.appendStep('int-g', step(seq))
    void p.then(() => {
      order.push(seq)
      if (!storedStep(seq)) unread.push(seq)
    })
    return p
  }
  const first = Array.from({ length: 10 }, (_, i) => append(i))
  t.ok(
    first.every((p) => p === first[0]),
    'the steps of one event turn go in one transaction'
  )
  await new Promise((r) => setImmediate(r))
  // a later turn: held while the first commit is in flight, or a transaction of their own once it landed
  const next = Array.from({ length: 10 }, (_, i) => append(10 + i))
  t.ok(
    next.every((p) => p === next[0]) && next[0] !== first[0],
    'the steps of a later turn go together, in a transaction after it'
  )
  const acks = [...first, ...next]
  // a delete and a terminal step issued while steps wait: each is queued behind them
  const doomed = Array.from({ length: 5 }, (_, i) => s.appendStep('int-del', step(i)))
  const deleted = s.delete('int-del')
  const more = Array.from({ length: 5 }, (_, i) => s.appendStep('int-g', step(20 + i)))
  const end = s.appendStep('int-g', step(25, 'completion', 'done'))
  await Promise.all([...acks, ...more, end])
  t.same(order, [...Array(20).keys()], 'acknowledged in seq order')
  t.same(unread, [], 'every acknowledged step reads back')
  const grouped = records('int-g').filter(({ value }) => Array.isArray(value))
  t.ok(grouped.length > 0, 'steps held for one group are one record')
  for (const { key, value } of grouped)
    t.equal(key[1], (value as { seq: number }[]).at(-1)!.seq, 'keyed by the last seq it holds')
  t.same(
    (await s.steps('int-g', 12, 3)).map((x) => x.seq),
    [13, 14, 15],
    'replay after a seq inside a record, with a limit'
  )
  await s.appendStep('int-g', step(13, 'text', 'again'))
  t.equal((await s.steps('int-g', 12, 1))[0]!.text, 't13', 'a repeated seq inside a record is ignored')
  t.equal(await deleted, true)
  await Promise.allSettled(doomed)
  t.same(
    [...stepsDb.getKeys({ start: ['int-del', -1], end: ['int-del', Number.MAX_SAFE_INTEGER] })],
    [],
    'no step of a deleted run outlives it'
  )
  await s.idle()
  t.same(
    (await s.load('int-g'))!.steps.map((x) => x.seq),
    [...Array(26).keys()],
    'the ended record holds every step appended before the terminal one'
  )
})

// By default an ended run stays in its step records: packing is a CPU cost per step an operator
// opts into for fewer bytes at rest. Nothing marks the run, so a later start with packing on
// leaves it as it is, and it reads the same either way.
t.test('lmdb: by default an ended run keeps its step records and is never marked for packing', async (t) => {
  const dir = tempDir(t, 'istore-unpacked')
  let env = new Store(dir)
  t.teardown(() => env.close())
  let s = new LmdbInteractionStore(env)
  await s.start()
  await s.save(header('int-kept'))
  for (let i = 0; i < 20; i++) await s.appendStep('int-kept', step(i))
  await s.appendStep('int-kept', step(20, 'completion', 'done'))
  await t.rejects(s.appendStep('int-kept', step(21)), ENDED, 'a step after the end is refused')
  await s.idle()
  const records = () => [
    ...env
      .db('interaction-steps', SHARED)
      .getKeys({ start: ['int-kept', -1], end: ['int-kept', Number.MAX_SAFE_INTEGER] })
  ]
  t.equal(records().length, 21, 'every step record stays')
  t.equal(env.db('interaction-steps-ended', PACKED).get('int-kept'), undefined, 'no packed record')
  t.same([...env.db('interactions-unpacked').getKeys()], [], 'nothing marked')
  const steps = (await s.load('int-kept'))!.steps
  t.same(
    steps.map((x) => x.seq),
    [...Array(21).keys()]
  )
  await env.close()
  env = new Store(dir)
  s = new LmdbInteractionStore(env, PACKING)
  await s.start()
  await s.idle()
  t.equal(records().length, 21, 'a start with packing on leaves a run ended while it was off')
  t.same((await s.load('int-kept'))!.steps, steps)
  await t.rejects(s.appendStep('int-kept', step(21, 'error', 'x')), ENDED, 'one terminal step')
})

// An ended run's step records move, as stored, into one compressed record in a transaction after
// that of its terminal step. What a reader sees must not change with it: replay by seq, one
// terminal step, nothing after it; and runs packed by stores written before still read.
t.test('lmdb: an ended run is one record, read and refused as before, and survives a reopen', async (t) => {
  const dir = tempDir(t, 'istore-packed')
  let env = new Store(dir)
  t.teardown(() => env.close())
  let s = new LmdbInteractionStore(env, PACKING)
  await s.start()
  await s.save(header('int-done'))
  await s.save(header('int-left'))
  await s.save(header('int-older'))
  // issued together, none awaited: the terminal step's transaction packs every step before it
  const pending = Array.from({ length: 50 }, (_, i) => s.appendStep('int-done', step(i)))
  const terminal = s.appendStep('int-done', step(50, 'completion', 'done'))
  const late = t.rejects(s.appendStep('int-done', step(51)), ENDED, 'a step issued after the terminal one is refused')
  for (let i = 0; i < 5; i++) await s.appendStep('int-left', step(i))
  for (let i = 0; i < 10; i++) await s.appendStep('int-older', step(i))
  await s.appendStep('int-older', step(10, 'completion', 'done'))
  await s.save(header('int-older', { status: 'COMPLETED' }))
  await Promise.all(pending)
  await terminal
  await late
  // packed by a transaction after the terminal one: reads answer the same before and after
  t.same((await s.load('int-done'))!.steps.length, 51, 'read whole as soon as the terminal step is acknowledged')
  await s.idle()
  // the databases of the environment open at the time
  const records = (id: string) => [
    ...env.db('interaction-steps', SHARED).getKeys({ start: [id, -1], end: [id, Number.MAX_SAFE_INTEGER] })
  ]
  const packed = (id: string) => env.db('interaction-steps-ended', PACKED).get(id)
  t.same(records('int-done'), [], 'no step record is left')
  t.ok(packed('int-done') instanceof Uint8Array, 'one record holds them as they were stored')
  const done = (await s.load('int-done'))!.steps
  t.same(
    done.map((x) => x.seq),
    Array.from({ length: 51 }, (_, i) => i)
  )
  t.same(
    (await s.steps('int-done', 10, 5)).map((x) => x.seq),
    [11, 12, 13, 14, 15],
    'replay after a seq, with a limit'
  )
  t.same(
    (await s.steps('int-done', 49)).map((x) => x.type),
    ['completion']
  )
  t.same(await s.steps('int-done', 50), [])
  await s.appendStep('int-done', step(3, 'text', 'again'))
  t.equal((await s.steps('int-done', 2, 1))[0]!.text, 't3', 'a repeated seq is ignored, as before the end')
  await t.rejects(s.appendStep('int-done', step(52)), ENDED)
  await t.rejects(s.appendStep('int-done', step(52, 'error', 'x')), ENDED, 'one terminal step')
  t.throws(() => env.db('interaction-steps-ended'), /compression/, 'opened the other way it would not read back')
  t.throws(() => env.db('interaction-steps'), /shared structures/, 'nor without its shared structures')
  const older = (await s.load('int-older'))!.steps

  await env.close()
  env = new Store(dir)
  const rawSteps = env.db<unknown, [string, number]>('interaction-steps', SHARED)
  const rawPacked = env.db<unknown, string>('interaction-steps-ended', PACKED)
  // as a process killed between the terminal step's commit and the packing leaves it
  await rawPacked.remove('int-done')
  for (const x of done) await rawSteps.put(['int-done', x.seq], x)
  await env.db('interactions-unpacked').put('int-done', true)
  // as a store written before packed a run: its steps decoded, in one array
  await rawPacked.put('int-older', older)
  s = new LmdbInteractionStore(env, PACKING)
  t.equal(await s.start(), 2, 'both runs were live: headers not saved ended')
  await s.idle()
  t.ok(packed('int-done') instanceof Uint8Array, 'the next start packs a run ended but not packed')
  t.same(records('int-done'), [])
  t.same([...env.db('interactions-unpacked').getKeys()], [], 'and no run is left marked')
  t.same((await s.load('int-done'))!.steps, done, 'the ended run keeps its steps and its one terminal step')
  const left = (await s.load('int-left'))!
  t.same(
    left.steps.map((x) => `${x.seq}:${x.type}`),
    ['0:text', '1:text', '2:text', '3:text', '4:text', '5:error']
  )
  t.same(records('int-left'), [])
  t.ok(packed('int-left') instanceof Uint8Array)
  t.same((await s.load('int-older'))!.steps, older, 'a run packed the way stores did before reads back')
  t.same(
    (await s.steps('int-older', 7, 2)).map((x) => x.seq),
    [8, 9]
  )
  await s.appendStep('int-older', step(4, 'text', 'again'))
  await t.rejects(s.appendStep('int-older', step(11)), ENDED, 'and refuses a step after its end')
  t.equal(await s.delete('int-done'), true)
  t.equal(packed('int-done'), undefined, 'deleted with its run')
  t.equal(await s.load('int-done'), undefined)
  t.equal(await s.delete('int-older'), true)
  t.equal(packed('int-older'), undefined)
})

t.test(
  'lmdb: a packing transaction the disk refuses is reported; the run reads from its steps and packs after a restart',
  async (t) => {
    const dir = tempDir(t, 'istore-pack-fails')
    let env = new Store(dir)
    t.teardown(() => env.close())
    const errors: Error[] = []
    let s = new LmdbInteractionStore(env, { ...PACKING, onError: (err) => errors.push(err) })
    await s.start()
    await s.save(header('int-refused'))
    const packedDb = env.db<unknown, string>('interaction-steps-ended', PACKED)
    // lmdb-js's own put, refusing inside the packing transaction as a full disk would
    const put = packedDb.put.bind(packedDb)
    packedDb.put = (() => {
      throw new Error('MDB_MAP_FULL: Environment mapsize limit reached')
    }) as typeof packedDb.put
    for (let i = 0; i < 3; i++) await s.appendStep('int-refused', step(i))
    await s.appendStep('int-refused', step(3, 'completion', 'done'))
    await s.idle()
    packedDb.put = put
    t.equal(errors.length, 1, 'reported once')
    t.match(errors[0]!.message, /MDB_MAP_FULL/)
    t.equal(packedDb.get('int-refused'), undefined, 'nothing packed')
    t.same([...env.db('interactions-unpacked').getKeys()], ['int-refused'], 'the run stays marked')
    const steps = (await s.load('int-refused'))!.steps
    t.same(
      steps.map((x) => x.seq),
      [0, 1, 2, 3],
      'read from its step records meanwhile'
    )
    await env.close()
    env = new Store(dir)
    s = new LmdbInteractionStore(env, { ...PACKING, onError: (err) => errors.push(err) })
    await s.start()
    await s.idle()
    t.ok(env.db('interaction-steps-ended', PACKED).get('int-refused') instanceof Uint8Array, 'packed after the restart')
    t.same((await s.load('int-refused'))!.steps, steps)
    t.equal(errors.length, 1)
  }
)

// Steps are stored with their key lists shared in the database (each value is its fields only).
// A data directory written before that holds values that carry their own key lists: they must
// read back, in seq order beside the new ones, and pack into the ended record unchanged.
t.test('lmdb: steps written before structures were shared read back beside new ones, and pack', async (t) => {
  const dir = tempDir(t, 'istore-structures')
  const before = [step(0), { ...step(1, 'tool-call', null), toolName: 'f', data: { id: 'c1', arguments: { q: 'x' } } }]
  let env = new Store(dir)
  t.teardown(() => env.close())
  // the database as it was opened before: no shared structures
  const old = env.db<unknown, [string, number]>('interaction-steps')
  for (const x of before) await old.put(['int-old', x.seq], x)
  await env.close()
  env = new Store(dir)
  const s = new LmdbInteractionStore(env, PACKING)
  await s.start()
  await s.save(header('int-old'))
  const after = [step(2), { ...step(3, 'tool-result', null), toolName: 'f', data: { id: 'c1', result: 'y' } }, step(4)]
  for (const x of after) await s.appendStep('int-old', x)
  t.same(await s.steps('int-old', -1), [...before, ...after], 'old and new values, in seq order')
  t.same(await s.steps('int-old', 0, 2), [before[1], after[0]], 'replay after a seq crosses the two')
  // more shapes than the database shares: the later ones are defined inside the record using them
  const shapes = Array.from({ length: 40 }, (_, i) => ({
    ...step(5 + i, 'tool-result', null),
    toolName: 'f',
    data: { [`k${i}`]: i }
  }))
  for (const x of shapes) await s.appendStep('int-old', x)
  const end = step(45, 'completion', 'done')
  await s.appendStep('int-old', end)
  const all = [...before, ...after, ...shapes, end]
  await s.idle()
  const stepsDb = env.db<unknown[], [string, number]>('interaction-steps', SHARED)
  t.ok(stepsDb.get(Symbol.for('structures') as never)!.length < 40, 'some shapes are not shared')
  t.same([...stepsDb.getKeys({ start: ['int-old', -1], end: ['int-old', 99] })], [], 'packed')
  t.same((await s.load('int-old'))!.steps, all, 'the ended record holds every step as written')
  await env.close()
  env = new Store(dir)
  const reopened = new LmdbInteractionStore(env)
  await reopened.start()
  t.same((await reopened.load('int-old'))!.steps, all, 'and reads them back after a restart')
})

for (const [layout, opts] of [
  ['in their step records (the default)', {}],
  ['packed', PACKING]
] as const)
  t.test(`lmdb: ended runs keep at most 2x their steps’ JSON bytes, ${layout}`, async (t) => {
    const env = new Store(tempDir(t, 'istore-at-rest'))
    t.teardown(() => env.close())
    const s = new LmdbInteractionStore(env, opts)
    await s.start()
    const ids = Array.from({ length: 50 }, (_, i) => `int-rest-${String(i).padStart(3, '0')}-${'x'.repeat(26)}`)
    for (const id of ids) await s.save(header(id))
    const before = env.pages()
    let json = 0
    // runs in flight side by side, as a busy server appends them: interleaved, not awaited one by one
    for (let seq = 0; seq < 200; seq++)
      await Promise.all(
        ids.map((id) => {
          const x = { ...step(seq, 'text', `w${seq} `), data: {}, createdAt: new Date().toISOString() }
          json += JSON.stringify(x).length
          return s.appendStep(id, x)
        })
      )
    for (const id of ids) {
      const x = step(200, 'completion', null)
      json += JSON.stringify(x).length
      await s.appendStep(id, x)
    }
    await s.idle()
    const after = env.pages()
    const kept = (after.used - before.used) * after.pageSize
    t.ok(
      kept <= 2 * json,
      `${(kept / ids.length / 1024).toFixed(1)} KB kept per run for ${(json / ids.length / 1024).toFixed(1)} KB of JSON`
    )
    t.equal((await s.load(ids[7]!))!.steps.length, 201)
  })
