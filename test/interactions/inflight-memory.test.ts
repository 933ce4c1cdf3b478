import t from 'tap'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import WebSocket from 'ws'
import { AI, type AiEvent } from '../../runtime/ai/index.js'
import { ALICE, startInteractions } from './helpers.js'
import { STREAM, until } from './stream-helpers.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const TURNS = 100
const DELTAS = 200

/** JS heap in use after full collections. */
async function heap(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 30))
    gc()
  }
  return process.memoryUsage().heapUsed
}

t.test(
  'a turn in flight holds little beyond its steps: 200 text deltas streamed live grow the heap by well under 12 KB a turn',
  { timeout: 120_000 },
  async (t) => {
    // the quota would refuse all but 32 of one principal's runs: this measures memory, not the quota
    const tp = await startInteractions({
      'platform.interactions.text-coalesce-ms': 0,
      'platform.interactions.quota.runs-in-flight': 0
    })
    t.teardown(tp.close)
    // the demo runtime's turns wait before their first event, then after DELTAS text deltas: all in
    // flight at once, at known points
    const demo = tp.platform.area(AI).runtime('demo')!
    const original = demo.stream.bind(demo)
    let go!: () => void
    let release!: () => void
    const start = new Promise<void>((r) => (go = r))
    const gate = new Promise<void>((r) => (release = r))
    let waiting = 0
    let held = 0
    let gated = false
    demo.stream = async function* (request, signal): AsyncGenerator<AiEvent> {
      let texts = 0
      const stop = gated
      if (stop) {
        waiting++
        await start
      }
      for await (const e of original(request, signal)) {
        yield e
        if (stop && e.type === 'text' && ++texts === DELTAS) {
          held++
          await gate
        }
      }
    }
    const message = Array.from({ length: DELTAS }, (_, i) => `w${i}`).join(' ')
    const sockets: WebSocket[] = []
    const watch = (id: string, counts: number[], i: number): Promise<void> =>
      new Promise((resolve) => {
        const ws = new WebSocket(`${tp.url.replace(/^http/, 'ws')}${STREAM}?id=${id}&access_token=${ALICE}`)
        sockets.push(ws)
        ws.on('message', (d) => {
          if (String(d).startsWith('{"type":"interaction-step"')) counts[i]!++
        })
        ws.on('open', () => resolve())
      })
    const run = async (n: number): Promise<{ ids: string[]; counts: number[] }> => {
      const ids = await Promise.all(
        Array.from({ length: n }, async () => (await tp.api.create({ message, background: true })).body.id as string)
      )
      const counts = ids.map(() => 0)
      await Promise.all(ids.map((id, i) => watch(id, counts, i)))
      return { ids, counts }
    }
    // warm-up: code paths compiled, lazy state built, before anything is measured
    await run(10)
    await until(() => tp.service.inFlight === 0)

    gated = true
    const { counts } = await run(TURNS)
    await until(() => waiting === TURNS && tp.service.feed.watched === TURNS)
    const before = await heap()
    go()
    await until(() => held === TURNS && counts.every((c) => c >= DELTAS), 60_000)
    const after = await heap()
    const perTurn = (after - before) / TURNS
    t.comment(`heap growth per turn over ${DELTAS} live deltas: ${(perTurn / 1024).toFixed(1)} KB`)
    t.ok(perTurn < 12 * 1024, `grew ${(perTurn / 1024).toFixed(1)} KB per turn`)
    release()
    await until(() => tp.service.inFlight === 0, 60_000)
    for (const ws of sockets) ws.close()
  }
)
