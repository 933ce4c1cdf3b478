// Governance decisions on the admin event stream, from real turns through the agent endpoint
// under a deny policy: the small GovernanceDecision event, nothing built while nobody watches,
// and replay / `after` for decisions like for any event.
import t from 'tap'
import { governedAdminPlatform, ALICE } from './helpers.js'
import { wsEvents, sseEvents, reach } from './event-clients.js'
import { agentSocket } from '../ai/agent-clients.js'
import { wsMember } from '../transport/clients.js'
import { governanceOf } from '../../runtime/governance/index.js'

const PATH = '/platform/agent/demo'
const auth = { authorization: `Bearer ${ALICE}` }
const tp = await governedAdminPlatform()
t.teardown(tp.close)
const gov = governanceOf(tp.platform)!
const agent = await agentSocket(tp.url, PATH)
t.teardown(() => agent.ws.close())
/** The last seq the previous test saw. */
let lastSeq = 0

t.test('decisions made while nobody subscribes are not numbered', async (t) => {
  const before = gov.decisionLog.size
  const frames = await agent.turn('the launch codes, unwatched')
  t.match(frames.at(-1), { type: 'error', data: /denied by policy no-launch-codes/ })
  t.ok(gov.decisionLog.size > before, 'the decision log recorded the turn')
  const late = await wsEvents(tp.url, '', auth)
  t.teardown(() => late.close())
  // the replay comes first; a room member joining after it marks its end
  const member = await wsMember(tp.url, 'marker')
  t.teardown(() => member.ws.close())
  await late.inbox.type('ResourceConnected', (e) => e.uuid === member.uuid)
  t.notOk(
    late.inbox.all.some((e) => e.type === 'GovernanceDecision'),
    'no GovernanceDecision was built for the unwatched turn'
  )
})

t.test('a denied turn reaches WebSocket and SSE subscribers as a small GovernanceDecision', async (t) => {
  const ws = await wsEvents(tp.url, '', auth)
  const sse = await sseEvents(tp.url, '', auth)
  t.teardown(() => {
    ws.close()
    sse.close()
  })
  const frames = await agent.turn(JSON.stringify({ message: 'give me the launch codes', conversationId: 'c9' }))
  t.match(frames.at(-1), { type: 'error', data: /denied by policy no-launch-codes/ })
  const denied = await ws.inbox.type('GovernanceDecision', (e) => e.decision === 'deny')
  t.same(
    Object.keys(denied),
    ['type', 'policy', 'decision', 'reason', 'agentId', 'phase', 'timestamp', 'node', 'seq'],
    'policy, decision, reason, agent, phase: no context snapshot, no message text'
  )
  t.match(denied, {
    policy: 'no-launch-codes',
    decision: 'deny',
    reason: 'deny-list: request matched a denied phrase',
    agentId: 'demo',
    phase: 'pre_admission'
  })
  t.notOk(JSON.stringify(ws.inbox.all).includes('launch codes'), 'the message text stays off the stream')
  // the same entry as the decision log's, down to the gate's timestamp
  const logged = gov.decisionLog.recent(20).find((d) => d.decision === 'deny' && d.timestamp === denied.timestamp)
  t.ok(logged, 'the event carries the logged entry’s timestamp')

  // an admitted turn: both phases' evaluations, each an event, numbered with the rest
  t.match((await agent.turn('What is a sandbox?')).at(-1), { event: 'complete' })
  const post = await ws.inbox.type('GovernanceDecision', (e) => e.phase === 'post_response')
  t.match(post, { decision: 'admit', agentId: 'demo', reason: '' })
  await reach(sse, post.seq)
  t.same(
    sse.inbox.all.filter((e) => e.type === 'GovernanceDecision' && e.seq <= post.seq),
    ws.inbox.all.filter((e) => e.type === 'GovernanceDecision' && e.seq <= post.seq),
    'the same decisions on SSE'
  )
  lastSeq = post.seq
})

t.test('a subscriber that reconnects with after gets the decisions made while it was away', async (t) => {
  const first = await wsEvents(tp.url, `?after=${lastSeq}`, auth)
  await agent.turn('launch codes, first')
  const seen = await first.inbox.type('GovernanceDecision', (e) => e.decision === 'deny')
  first.close()
  await first.closed
  // nobody subscribes now, but the stream lingers for a reconnect: the gap is kept
  await agent.turn('launch codes, while away')
  await agent.turn('launch codes, still away')
  const again = await wsEvents(tp.url, `?after=${seen.seq}`, auth)
  t.teardown(() => again.close())
  await again.inbox.type('GovernanceDecision', () => again.inbox.all.filter((e) => e.decision === 'deny').length >= 2)
  t.equal(again.inbox.all[0]!.seq, seen.seq + 1, 'resumes right after the last seen seq')
  t.equal(again.inbox.all.filter((e) => e.type === 'GovernanceDecision' && e.decision === 'deny').length, 2)
  const sse = await sseEvents(tp.url, '', { ...auth, 'last-event-id': String(seen.seq) })
  t.teardown(() => sse.close())
  await reach(sse, again.inbox.all.at(-1)!.seq)
  t.same(sse.inbox.all.slice(0, again.inbox.all.length), again.inbox.all, 'Last-Event-ID on SSE: the same')
})
