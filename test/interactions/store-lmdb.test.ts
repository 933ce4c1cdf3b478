import t, { type Test } from 'tap'
import { killWriterAfter, lastAcked } from '../helpers/kill-writer.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LmdbInteractionStore } from '../../runtime/interactions/index.js'
import { Store } from '../../runtime/store/index.js'
import { FIXTURE_NODE, header, runStoreContract, step } from './store-contract.js'

function tempDir(t: Test, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `platform-${name}-`))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

// each open() closes the previous environment and opens the directory afresh: a real restart
runStoreContract(t, 'lmdb', async (t) => {
  const dir = tempDir(t, 'istore')
  let env: Store | undefined
  t.teardown(() => env?.close())
  return {
    async open() {
      await env?.close()
      env = new Store(dir)
      return new LmdbInteractionStore(env, { node: FIXTURE_NODE })
    },
    // a second store object on the open environment stands for a second process on the directory
    async peer(node) {
      return new LmdbInteractionStore(env!, { node })
    }
  }
})

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
