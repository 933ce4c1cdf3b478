import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { PlatformClient } from '../../sdk/client.js'
import { startDropProxy } from '../helpers/drop-proxy.js'
import { ALICE } from './helpers.js'
import { range, startStreaming } from './stream-helpers.js'

const DELTAS = 2000
const DROPS = 100

/** `n` distinct random integers in [lo, hi), ascending. */
function points(n: number, lo: number, hi: number): number[] {
  const s = new Set<number>()
  while (s.size < n) s.add(lo + Math.floor(Math.random() * (hi - lo)))
  return [...s].sort((a, b) => a - b)
}

/**
 * A 2 000-step run on the LMDB store, streamed by the client through a proxy that cuts the
 * connection at 100 random seqs; the last cut also restarts the server on the same data. The
 * client must see every stored seq exactly once, in order, and the stored terminal state.
 */
for (const transport of ['websocket', 'sse'] as const) {
  t.test(`${transport}: ${DROPS} drops of a ${DELTAS}-step run, one across a restart`, async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'istream-drops-'))
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
    const settings = { 'platform.interactions.store': 'lmdb', 'platform.data-dir': dataDir }
    let tp = await startStreaming(DELTAS, 2, settings)
    const proxy = await startDropProxy(tp.port)
    t.teardown(async () => {
      await proxy.close()
      await tp.close()
    })
    const client = new PlatformClient({ baseUrl: proxy.url, token: ALICE })
    const run = await client.create({ message: 'many steps', background: true })
    // 99 cuts spread over the run, the restart late in it (the run may or may not finish first)
    const cuts = new Set(points(DROPS - 1, 0, 1700))
    const restartAt = 1800 + Math.floor(Math.random() * 150)
    const seen: number[] = []
    let terminal: any
    let drops = 0
    let owed = 0
    for await (const f of client.stream(run.id, { transport, retryDelayMs: 10, maxRetryDelayMs: 200 })) {
      if (f.type === 'interaction-terminal') {
        terminal = f
        continue
      }
      seen.push(f.step.seq)
      if (cuts.has(f.step.seq)) owed++
      // frames the client had already received when its connection was cut are still read: a cut
      // owed while no connection is open lands on the next frame, so every cut is a real one
      if (owed > 0 && proxy.dropAll() > 0) {
        owed--
        drops++
      }
      if (f.step.seq === restartAt) {
        await tp.close()
        proxy.dropAll()
        drops++
        tp = await startStreaming(DELTAS, 2, settings)
        proxy.retarget(tp.port)
      }
    }
    const stored = (await tp.api.get(run.id)).body
    t.comment(`${stored.steps.length} steps, ${stored.status}, restart at seq ${restartAt}`)
    t.equal(drops, DROPS, `${DROPS} connections cut`)
    t.ok(proxy.accepted > DROPS, 'and as many reconnections')
    t.ok(stored.steps.length > restartAt, 'the steps acknowledged before the restart are stored')
    t.same(seen, range(0, stored.steps.length - 1), 'every stored seq exactly once, in order')
    t.same(terminal, {
      type: 'interaction-terminal',
      id: run.id,
      status: stored.status,
      finalText: stored.finalText,
      errorMessage: stored.errorMessage
    })
    if (stored.status !== 'COMPLETED') t.equal(stored.errorMessage, 'interrupted: server restarted')
  })
}
