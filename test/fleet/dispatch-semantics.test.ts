// Each dispatch rule and its text from a real coordinator turn (a one-shot POST to the agent
// endpoint), with the journal and the admin health read back over HTTP.
import t from 'tap'
import { admin, ask, fleetPlatform } from './helpers.js'
import { LocalTransport } from '../../runtime/fleet/local-transport.js'
import type { AiService, TurnEvent, TurnRequest } from '../../runtime/ai/index.js'
import type { TurnTextSink } from '../../runtime/ai/turn-types.js'

const tp = await fleetPlatform({
  'platform.fleet.circuit-breaker.failure-threshold': 2,
  'platform.fleet.circuit-breaker.open-ms': 1000
})
t.teardown(tp.close)
const call = (agent: string, args: Record<string, unknown> = {}, skill?: string) => ({ agent, args, skill })

t.test(
  'a call runs the agent as a turn and answers its text; the message is args.message or skill + args',
  async (t) => {
    const a = await ask(tp.url, 'boss', 'call', 'say', undefined, { message: 'hello' })
    t.match(a.result, { agentName: 'say', skillId: 'run', text: 'hello', success: true, durationMs: Number })
    // a time-ordered UUID (v7): the journal's coordination index grows at its end
    t.match(a.coordinationId, /^coord-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const b = await ask(tp.url, 'boss', 'call', 'say', 'summarise', { topic: 'x', n: 2 })
    t.equal(b.result.text, 'summarise {"topic":"x","n":2}')
    t.not(b.coordinationId, a.coordinationId, 'each coordinator turn is its own coordination')
    t.ok(b.coordinationId! > a.coordinationId!, 'a later coordination sorts after an earlier one')
    t.equal((await ask(tp.url, 'boss', 'has')).result, 'object')
  }
)

t.test('an agent without a fleet has no ctx.fleet', async (t) => {
  const { postTurn } = await import('../ai/agent-clients.js')
  const r = await postTurn(tp.url, '/platform/agent/plain', 'hi')
  t.equal(r.frames.at(-1)!.data.summary, 'fleet: undefined')
})

t.test('unknown agent: the fleet is named', async (t) => {
  const a = await ask(tp.url, 'boss', 'call', 'nobody')
  t.match(a.result, {
    success: false,
    durationMs: 0,
    text: "No agent named 'nobody' in fleet. Available: [say, count, flaky, sleepy, broken, switch, ghost]"
  })
})

t.test('a fleet agent that is not loaded is unavailable', async (t) => {
  const a = await ask(tp.url, 'boss', 'call', 'ghost')
  t.match(a.result, { success: false, text: "Agent 'ghost' is not available (not loaded)" })
  const fleet = (await admin(tp.url, '/coordinators/boss/fleet')).body
  t.match(
    fleet.agents.find((x: any) => x.name === 'ghost'),
    { isAvailable: false, isLocal: false, weight: 2, version: '2.0.0' }
  )
})

t.test('a throwing fleet agent is a failed result, never a host crash', async (t) => {
  const a = await ask(tp.url, 'boss', 'call', 'broken')
  t.match(a.result, { success: false, text: "agent 'broken' run() failed: kaput" })
  t.equal((await fetch(tp.url + '/healthz')).status, 200)
})

t.test('timeout: the ref timeoutMs ends the call and its turn', async (t) => {
  const a = await ask(tp.url, 'boss', 'call', 'sleepy', undefined, { message: '5000' })
  t.match(a.result, { success: false, text: 'Agent timed out after 200ms' })
  t.ok(a.result.durationMs >= 190 && a.result.durationMs < 2000, `took ${a.result.durationMs} ms`)
  // attempts of one timeout share a timer: one armed for a call that answered in time still
  // times out the next, started after it
  const quick = await ask(tp.url, 'boss', 'call', 'sleepy', undefined, { message: '1' })
  t.match(quick.result, { success: true, text: 'slept' })
  const next = await ask(tp.url, 'boss', 'call', 'sleepy', undefined, { message: '5000' })
  t.match(next.result, { success: false, text: 'Agent timed out after 200ms' })
})

t.test('retries with backoff: a flaky agent succeeds on its third attempt', async (t) => {
  const t0 = Date.now()
  const a = await ask(tp.url, 'boss', 'call', 'flaky', undefined, { message: 'flaky-2' })
  t.match(a.result, { success: true, text: 'ok after 3', metadata: { attempts: 3 } })
  t.ok(Date.now() - t0 >= 300, 'backoff 100 ms then 200 ms')
  const steps = a.frames.filter((f) => f.data?.stepName === 'retrying').map((f) => f.data.data)
  t.match(steps, [
    { agent: 'flaky', attempt: 2, maxAttempts: 3 },
    { agent: 'flaky', attempt: 3, maxAttempts: 3 }
  ])
  const events = (await admin(tp.url, `/journal/${a.coordinationId}`)).body
  t.same(
    events.map((e: any) => e.type),
    ['AgentDispatched', 'AgentActivityChanged', 'AgentActivityChanged', 'AgentCompleted']
  )
  const more = await ask(tp.url, 'boss', 'call', 'flaky', undefined, { message: 'flaky-5' })
  t.match(more.result, { success: false, text: "agent 'flaky' run() failed: flake 3", metadata: { attempts: 3 } })
})

t.test('circuit breaker: open after consecutive failures, fast-fail, half-open probe, closed', async (t) => {
  const fail = () => ask(tp.url, 'boss', 'call', 'switch', undefined, { message: 'fail' })
  const ok = () => ask(tp.url, 'boss', 'call', 'switch', undefined, { message: 'ok' })
  await fail()
  const second = await fail()
  const health = (await admin(tp.url, '/coordinators/boss/health')).body
  t.match(
    health.agents.find((a: any) => a.name === 'switch'),
    { circuitState: 'OPEN', recentFailures: 2, available: false }
  )
  const open = await ok()
  t.match(open.result, { success: false, text: 'Circuit breaker open', durationMs: 0 })
  t.ok(open.frames.some((f) => f.data?.stepName === 'circuit-open'))
  await new Promise((r) => setTimeout(r, 1100))
  t.equal((await admin(tp.url, '/coordinators/boss/health')).body.agents[5].circuitState, 'HALF_OPEN')
  // the probe fails: open again
  const probe = await fail()
  t.match(probe.result, { success: false, text: "agent 'switch' run() failed: down" })
  t.equal((await ok()).result.text, 'Circuit breaker open')
  await new Promise((r) => setTimeout(r, 1100))
  const healed = await ok()
  t.match(healed.result, { success: true, text: 'up' })
  t.equal((await admin(tp.url, '/coordinators/boss/health')).body.agents[5].circuitState, 'CLOSED')
  const changes = async (id: string | undefined) =>
    (await admin(tp.url, `/journal/${id}`)).body
      .filter((e: any) => e.type === 'CircuitStateChanged')
      .map((e: any) => `${e.fromState}>${e.toState}`)
  t.same(await changes(second.coordinationId), ['CLOSED>OPEN'])
  t.same(await changes(probe.coordinationId), ['OPEN>HALF_OPEN', 'HALF_OPEN>OPEN'])
  t.same(await changes(healed.coordinationId), ['OPEN>HALF_OPEN', 'HALF_OPEN>CLOSED'])
})

t.test('parallel: keyed by agent (name#2 for a repeat); the first failure cancels the siblings', async (t) => {
  const a = await ask(tp.url, 'boss', 'parallel', [call('say', { message: 'a' }), call('say', { message: 'b' })])
  t.match(a.result, { say: { text: 'a', success: true }, 'say#2': { text: 'b', success: true } })
  const t0 = Date.now()
  const b = await ask(tp.url, 'boss', 'parallel', [call('sleepy', { message: '150' }), call('broken')])
  t.match(b.result, {
    broken: { success: false, text: "agent 'broken' run() failed: kaput" },
    sleepy: { success: false, text: 'Sibling cancelled after peer failure' }
  })
  t.ok(Date.now() - t0 < 2000)
  const events = (await admin(tp.url, `/journal/${b.coordinationId}`)).body
  const started = events.find((e: any) => e.type === 'CoordinationStarted')
  t.match(started, { parentEventId: null, coordinatorName: 'boss' })
  for (const e of events.filter((x: any) => x.type === 'AgentDispatched')) t.equal(e.parentEventId, started.eventId)
  const done = events.find((e: any) => e.type === 'CoordinationCompleted')
  t.match(done, { parentEventId: started.eventId, agentCallCount: 2, totalDurationMs: Number })
  for (const e of events.filter((x: any) => x.type === 'AgentFailed')) {
    const parent = events.find((x: any) => x.eventId === e.parentEventId)
    t.match(parent, { type: 'AgentDispatched', agentName: e.agentName })
  }
})

t.test('pipeline: _previous_result flows on; the first failure stops it', async (t) => {
  const a = await ask(tp.url, 'boss', 'pipeline', [call('say', { message: 'one' }), call('say', { tag: 'x' })])
  t.equal(a.result[1].text, 'run {"tag":"x","_previous_result":"one"}')
  const b = await ask(tp.url, 'boss', 'pipeline', [call('say', { message: 'one' }), call('broken'), call('count')])
  t.equal(b.result.length, 2)
  t.match(b.result[1], { agentName: 'broken', success: false })
  t.match(
    await ask(tp.url, 'boss', 'pipeline', []).catch((e: Error) => e.message),
    /pipeline requires at least one call/
  )
})

t.test('vote: the majority (trimmed, lower-cased) wins; a tie goes to the first agent; all failed', async (t) => {
  const a = await ask(tp.url, 'boss', 'vote', [
    call('say', { message: 'No' }),
    call('say', { message: ' Yes ' }),
    call('say', { message: 'yes' })
  ])
  t.match(a.result, { text: ' Yes ', success: true, metadata: { votes: 2, voters: 3, cohorts: 2 } })
  const tie = await ask(tp.url, 'boss', 'vote', [call('say', { message: 'B' }), call('say', { message: 'A' })])
  t.match(tie.result, { text: 'B', metadata: { votes: 1 } })
  const none = await ask(tp.url, 'boss', 'vote', [call('broken'), call('nobody')])
  t.match(none.result, { success: false, text: 'All 2 peer(s) failed' })
  t.match(
    await ask(tp.url, 'boss', 'vote', []).catch((e: Error) => e.message),
    /vote\(\) requires at least one AgentCall/
  )
})

t.test('route and refineUntil run their conditions and evaluators in the sandbox, journaled', async (t) => {
  const r = await ask(tp.url, 'boss', 'route', call('say', { message: 'tiny' }))
  t.match(r.result, { agentName: 'say', text: 'short: tiny', metadata: { matchedIndex: -1 } })
  const events = (await admin(tp.url, `/journal/${r.coordinationId}`)).body
  t.match(
    events.find((e: any) => e.type === 'RouteEvaluated'),
    { inputAgent: 'say', selectedAgent: 'say', matched: false }
  )
  const long = await ask(tp.url, 'boss', 'route', call('say', { message: 'a long one' }))
  t.match(long.result, { agentName: 'count', metadata: { matchedIndex: 0 } })
  t.equal(long.result.text, 'count 1')
  // count answers 'count 2' (scored 0.2, refined), then 'count 3' (passes)
  const f = await ask(tp.url, 'boss', 'refineUntil', call('count'), 5)
  t.match(f.result, { text: 'count 3', metadata: { turns: 2, score: 1 } })
  const evals = (await admin(tp.url, `/journal/${f.coordinationId}`)).body.filter(
    (e: any) => e.type === 'AgentEvaluated'
  )
  t.match(evals, [
    { agentName: 'count', evaluatorName: 'has-3', score: 0.2, passed: false },
    { agentName: 'count', evaluatorName: 'has-3', score: 1, passed: true }
  ])
  // the budget spent: the best try wins
  const spent = await ask(tp.url, 'boss', 'refineUntil', call('count'), 2)
  t.match(spent.result, { text: 'count 4', metadata: { turns: 1, score: 0.2 } })
  const all = (await admin(tp.url, `/journal/${f.coordinationId}`)).body
  t.match(
    all.find((e: any) => e.eventId === evals.at(-1).parentEventId),
    { type: 'AgentCompleted', agentName: 'count' }
  )
})

t.test('a cycle makes its coordinators unavailable, logged once', async (t) => {
  const a = await ask(tp.url, 'c1', 'call', 'say', undefined, { message: 'x' })
  t.match(a.result, { success: false, text: 'Circular fleet dependency: c1 -> c2 -> c3 -> c1' })
  await ask(tp.url, 'c1', 'call', 'say', undefined, { message: 'x' })
  const logged = tp.logs.filter((l) => String(l.msg).startsWith('Circular fleet dependency: c1 -> c2 -> c3 -> c1'))
  t.equal(logged.length, 1)
  t.match((await admin(tp.url, '/coordinators/c2/health')).body, {
    available: false,
    error: 'Circular fleet dependency: c2 -> c3 -> c1 -> c2'
  })
  t.match((await admin(tp.url, '/coordinators')).body, [
    { name: 'boss', agentCount: 7 },
    { name: 'waiter', agentCount: 2, availableCount: 2 },
    { name: 'c1', availableCount: 0 },
    { name: 'c2' },
    { name: 'c3' }
  ])
})

t.test(
  'a local call answers the turn complete text; the deltas go to a sink, never through the turn as events',
  async (t) => {
    let sink: TurnTextSink | undefined
    const USAGE = { input: 1, output: 2, cachedInput: 0, total: 3, model: 'm' }
    const ai = {
      runTurn: (req: TurnRequest, _signal: unknown, onText?: TurnTextSink) => {
        sink = onText
        return (async function* (): AsyncGenerator<TurnEvent> {
          for (const delta of ['one ', 'two']) {
            if (onText !== undefined) onText(delta)
            else yield { type: 'text', delta }
          }
          yield { type: 'usage', usage: USAGE }
          yield { type: 'complete', text: 'one two', preferences: [], userMessage: req.message }
        })()
      }
    } as unknown as AiService
    const ctx = { coordinationId: 'coord-x', coordinator: 'boss', principal: 'p' }
    const r = await new LocalTransport(ai).call({ agent: 'say', skill: 'run', args: { message: 'hi' } }, ctx)
    t.type(sink, 'function', 'the transport takes the deltas through a sink')
    t.match(r, { text: 'one two', success: true, metadata: { transport: 'local', usage: USAGE } })
  }
)
