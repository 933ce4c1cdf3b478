// A coordinator's turn on each sandbox tier, over the agent WebSocket and SSE, fans out to two
// agents; a real admin event-stream subscriber sees each call dispatched and completed under the
// turn's coordination id. Cancelling the coordinator's turn cancels its calls.
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { AI } from '../../runtime/ai/index.js'
import { agentSocket, eventually, postTurn, type Frame } from '../ai/agent-clients.js'
import { wsEvents, sseEvents } from '../admin/event-clients.js'
import { fleetPluginDir, admin } from './helpers.js'
import { startTestPlatform } from '../helpers/platform.js'
import { installAreas } from '../../runtime/areas.js'

// the agents (and the `waiter` coordinator) inline; one lead coordinator per tier beside them
const agents = fleetPluginDir('fleet-test', 'inline')
t.teardown(agents.remove)
const TIERS = ['isolate', 'worker', 'inline'] as const
for (const tier of TIERS) {
  const dir = join(agents.dir, `lead-${tier}`)
  mkdirSync(dir)
  writeFileSync(
    join(dir, 'plugin.json'),
    JSON.stringify({ name: `lead-${tier}`, version: '1.0.0', entry: 'index.js', sandbox: tier })
  )
  writeFileSync(
    join(dir, 'index.js'),
    `import { definePlugin, agent } from 'uws-agent-platform/sdk'
export default definePlugin({ agents: [agent({
  name: 'lead-${tier}',
  fleet: ['say', 'count'],
  async run(turn, ctx) {
    const r = await ctx.fleet.parallel([
      { agent: 'say', args: { message: turn.message } },
      { agent: 'count', skill: 'tally' }
    ])
    return r.say.text + ' / ' + r.count.skillId + ' ' + r.count.success
  }
})] })
`
  )
}
const tp = await startTestPlatform(
  {
    'platform.plugins.dirs': [agents.dir],
    'platform.plugins.fleet-test': { sandbox: 'inline' },
    'platform.plugins.lead-worker': { sandbox: 'worker' },
    'platform.plugins.lead-inline': { sandbox: 'inline' },
    'platform.admin.content-read-auth-required': false
  },
  { install: installAreas }
)
t.teardown(tp.close)

const coordinationOf = (frames: Frame[]): string =>
  frames.find((f) => f.event === 'agent-step' && f.data.stepName === 'executing')!.data.data.coordinationId

for (const tier of TIERS)
  t.test(`${tier}: a coordinator's WebSocket turn fans out; the admin stream sees both calls`, async (t) => {
    const events = await wsEvents(tp.url)
    t.teardown(() => events.close())
    const s = await agentSocket(tp.url, `/platform/agent/lead-${tier}`)
    t.teardown(() => s.ws.close())
    const frames = await s.turn(JSON.stringify({ message: 'hello fleet' }))
    t.match(frames.at(-1), { event: 'complete', data: { summary: 'hello fleet / tally true' } })
    const steps = frames.filter((f) => f.event === 'agent-step').map((f) => f.data.stepName)
    t.same(steps.sort(), ['completed', 'completed', 'executing', 'executing'])
    const coordinationId = coordinationOf(frames)
    t.match(coordinationId, /^coord-/)
    for (const [agentName, skill] of [
      ['say', 'run'],
      ['count', 'tally']
    ]) {
      // a new subscriber is replayed earlier events too: this turn's are those of its coordination
      const mine = (e: Frame): boolean => e.agentName === agentName && e.coordinationId === coordinationId
      t.match(await events.inbox.type('AgentDispatched', mine), { skill })
      t.match(await events.inbox.type('AgentCompleted', mine), {
        coordinationId,
        skill,
        duration: Number,
        success: true
      })
    }
    // the journal: Started, two Dispatched under it, each Completed under its Dispatched, Completed
    const journal = (await admin(tp.url, `/journal?coordinationId=${coordinationId}`)).body
    t.same(journal.map((e: any) => e.type).sort(), [
      'AgentCompleted',
      'AgentCompleted',
      'AgentDispatched',
      'AgentDispatched',
      'CoordinationCompleted',
      'CoordinationStarted'
    ])
  })

t.test('SSE: a one-shot POST to a coordinator streams the fan-out; the SSE admin stream sees it', async (t) => {
  const events = await sseEvents(tp.url)
  t.teardown(() => events.close())
  const r = await postTurn(tp.url, '/platform/agent/lead-isolate', JSON.stringify({ message: 'over sse' }))
  t.equal(r.status, 200)
  t.match(r.frames.at(-1), { event: 'complete', data: { summary: 'over sse / tally true' } })
  const coordinationId = coordinationOf(r.frames)
  t.match(await events.inbox.type('AgentCompleted', (e) => e.coordinationId === coordinationId), { success: true })
})

t.test('cancelling the coordinator turn cancels the calls it has in flight', async (t) => {
  const ai = tp.platform.area(AI)
  const s = await agentSocket(tp.url, '/platform/agent/waiter')
  t.teardown(() => s.ws.close())
  s.ws.send(
    JSON.stringify({
      message: JSON.stringify({ op: 'call', params: ['sleepy', 'run', { message: '60000' }] })
    })
  )
  const executing = await s.inbox.next((f) => f.event === 'agent-step' && f.data.stepName === 'executing')
  const coordinationId = executing.data.data.coordinationId as string
  await eventually(() => ai.inFlight() === 2, 5000, 'the coordinator and its call in flight')
  s.ws.send(JSON.stringify({ type: 'cancel' }))
  const end = await s.inbox.next((f) => f.type === 'error')
  t.match(end, { type: 'error' })
  await eventually(() => ai.inFlight() === 0, 5000, 'both turns ended')
  const journal = (await admin(tp.url, `/journal/${coordinationId}`)).body
  t.match(journal, [
    { type: 'AgentDispatched', agentName: 'sleepy' },
    { type: 'AgentFailed', agentName: 'sleepy', error: "Cancelled: the coordinator's turn ended" }
  ])
})

t.test('ctx.fleet answers only while the turn is open', async (t) => {
  // the turn id is the only way to the host; a stale one is refused like any ended turn
  const turns = tp.platform.plugins.agentTurns
  await t.rejects(turns.call('lead-inline', 'agent.fleet.call', ['no-such-turn', { agent: 'say' }]), {
    message: 'agent.fleet.call: no open agent turn with this id'
  })
})

t.test('AG-UI: a coordinator is an agent like any other; its dispatches are steps', async (t) => {
  const res = await fetch(`${tp.url}/platform/agent/lead-inline/agui`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({
      threadId: 'thread-fleet',
      runId: 'run-fleet',
      state: {},
      messages: [{ id: 'm-1', role: 'user', content: 'via agui' }],
      tools: [],
      context: [],
      forwardedProps: {}
    })
  })
  t.equal(res.status, 200)
  const events = (await res.text())
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)))
  const text = events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta)
    .join('')
  t.equal(text, 'via agui / tally true')
  t.equal(events.filter((e) => e.type === 'STEP_STARTED' && e.stepName === 'executing').length, 2)
  t.equal(events.at(-1).type, 'RUN_FINISHED')
})
