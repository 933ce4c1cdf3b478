import t from 'tap'
import { startTestPlatform } from '../helpers/platform.js'
import { loadWorker } from '../../runtime/plugins/worker/index.js'
import { join } from 'node:path'
import type { LoadSpec } from '../../runtime/plugins/index.js'
import { HEALTHY_FIXTURE, runTierContract } from './tier-contract.js'
import { rejects, tool } from './helpers.js'

const tp = await startTestPlatform()
t.teardown(tp.close)

runTierContract(t, {
  tier: 'worker',
  load: loadWorker,
  platform: tp,
  memoryMb: 64,
  stopsRunawayCode: true,
  timeoutMessage: /exceeded its time limit of 300 ms/,
  countsFailures: true,
  argsAsJson: true,
  wrapsThrows: true,
  sharesModuleState: false,
  missingEntry: /Cannot find module|not find/
})

const workerSpec = (limits: { timeoutMs: number; concurrency: number }): LoadSpec => {
  const l = { memoryMb: 64, ...limits }
  const permissions = { net: [], kv: false, env: [] }
  return {
    dir: HEALTHY_FIXTURE,
    entry: join(HEALTHY_FIXTURE, 'index.js'),
    manifest: { name: 'healthy', version: '1.0.0', entry: 'index.js', sandbox: 'worker', permissions, limits: l },
    grant: { sandbox: 'worker', permissions, limits: l },
    capabilities: { log: tp.platform.logger }
  }
}

t.test("worker: a call's time limit counts from when its thread starts it, not from when it queued", async (t) => {
  // one thread: the second call waits for the first, and the one timer the calls share must re-arm
  // for the second's own start instead of expiring it on the first's schedule
  // (each sleeps 500 ms of an 800 ms limit; the second ends about 1 000 ms after it was made)
  const inst = await loadWorker(workerSpec({ timeoutMs: 800, concurrency: 1 }))
  t.teardown(() => inst.dispose())
  const [a, b] = await Promise.all([tool(inst, 'sleep', { ms: 500 }), tool(inst, 'sleep', { ms: 500 })])
  t.same([a, b], [{ aborted: false }, { aborted: false }])
})

t.test('worker: kind and name reach the thread exactly, whatever characters they hold', async (t) => {
  const inst = await loadWorker(workerSpec({ timeoutMs: 2000, concurrency: 2 }))
  t.teardown(() => inst.dispose())
  for (const name of ['1,2,3', ',', 'a:b,0:', '😀,é'])
    await rejects(t, tool(inst, name), 'threw', new RegExp(`unknown tool '${name}'`))
  await rejects(
    t,
    inst.invoke({ kind: 'to,ol' as never, name: 'x', args: {} }),
    'threw',
    /unknown contribution kind 'to,ol'/
  )
  t.equal(await tool(inst, 'text', { s: '12:34' }), '12:34', 'a result with digits and a colon')
})

t.test('worker: with or without the watch before sleeping, every call is answered, after idle gaps too', async (t) => {
  for (const spinUs of [0, 50, 5000]) {
    const inst = await loadWorker({ ...workerSpec({ timeoutMs: 2000, concurrency: 2 }), spinUs })
    const got: unknown[] = []
    for (let i = 0; i < 20; i++) got.push(await tool(inst, 'text', { s: `n${i}` }))
    // longer than the watch: the thread is asleep when the next call comes and must be woken
    await new Promise((r) => setTimeout(r, 30))
    got.push(await tool(inst, 'text', { s: 'after a gap' }))
    got.push(...(await Promise.all([1, 2, 3].map((i) => tool(inst, 'text', { s: `p${i}` })))))
    await inst.dispose()
    t.same(
      got,
      [...Array.from({ length: 20 }, (_, i) => `n${i}`), 'after a gap', 'p1', 'p2', 'p3'],
      `spin-us ${spinUs}`
    )
  }
})
