import t from 'tap'
import { AI } from '../../runtime/ai/index.js'
import { AgentSessions } from '../../runtime/ai/sessions.js'
import { installAreas } from '../../runtime/areas.js'
import { EventBus, type PlatformEvent } from '../../runtime/events/index.js'
import { startTestPlatform } from '../helpers/platform.js'

t.test('sessions on a real platform: bus events, counts and lists per agent', async (t) => {
  const tp = await startTestPlatform({}, { install: installAreas })
  t.teardown(tp.close)
  const events: PlatformEvent[] = []
  tp.platform.bus.on('AgentSessionStarted', (e) => events.push(e))
  tp.platform.bus.on('AgentSessionEnded', (e) => events.push(e))
  const sessions = tp.platform.area(AI).sessions

  const a = sessions.start('helper', 'websocket')
  const b = sessions.start('helper', 'sse')
  // `open` is `start` answering the id alone
  const c = sessions.get(sessions.open('other', 'long-polling'))!
  t.match(c, { agentName: 'other', transport: 'long-polling', messageCount: 0 })
  t.not(a.sessionId, b.sessionId, 'ids are distinct')
  t.match(events, [
    { type: 'AgentSessionStarted', agentName: 'helper', sessionId: a.sessionId },
    { type: 'AgentSessionStarted', agentName: 'helper', sessionId: b.sessionId },
    { type: 'AgentSessionStarted', agentName: 'other', sessionId: c.sessionId }
  ])
  t.equal(sessions.activeCount('helper'), 2)
  t.equal(sessions.activeCount('other'), 1)
  t.equal(sessions.activeCount('nobody'), 0)
  t.equal(sessions.activeCount(), 3, 'all agents')

  t.equal(sessions.touch(a.sessionId), true)
  t.equal(sessions.touch(a.sessionId), true)
  const listed = sessions.list('helper')
  t.same(
    listed.map((s) => s.sessionId),
    [a.sessionId, b.sessionId],
    'oldest first'
  )
  t.same(Object.keys(listed[0]!).sort(), [
    'agentName',
    'lastActivity',
    'messageCount',
    'sessionId',
    'startTime',
    'transport'
  ])
  t.match(listed[0], { agentName: 'helper', transport: 'websocket', messageCount: 2 })
  t.ok(!Number.isNaN(Date.parse(listed[0]!.startTime)) && listed[0]!.lastActivity >= listed[0]!.startTime)
  t.same(sessions.list('nobody'), [])

  await new Promise((r) => setTimeout(r, 5))
  t.equal(sessions.end(a.sessionId), true)
  t.equal(sessions.end(a.sessionId), false, 'ends once')
  t.equal(sessions.touch(a.sessionId), false, 'an ended session is not touched')
  const ended = events.filter((e) => e.type === 'AgentSessionEnded')
  t.equal(ended.length, 1, 'one end event')
  t.match(ended[0], { agentName: 'helper', sessionId: a.sessionId, messageCount: 2 })
  t.ok((ended[0] as PlatformEvent<'AgentSessionEnded'>).duration >= 5, 'duration in ms')

  sessions.end(b.sessionId)
  sessions.end(c.sessionId)
  t.equal(sessions.activeCount('helper'), 0, 'back to zero')
  t.equal(sessions.activeCount(), 0)
  t.same(sessions.list('helper'), [])
  t.equal(events.filter((e) => e.type === 'AgentSessionEnded').length, 3)
})

t.test('shutdown ends the sessions still active, announced on the bus', async (t) => {
  const tp = await startTestPlatform({}, { install: installAreas })
  t.teardown(tp.close)
  const ended: string[] = []
  tp.platform.bus.on('AgentSessionEnded', (e) => ended.push(e.sessionId))
  const s = tp.platform.area(AI).sessions.start('helper', 'websocket')
  await tp.platform.close()
  t.same(ended, [s.sessionId])
  t.equal(tp.platform.area(AI).sessions.activeCount(), 0)
})

t.test('bad input: a clear error and no session', async (t) => {
  const bus = new EventBus()
  let started = 0
  bus.on('AgentSessionStarted', () => started++)
  const sessions = new AgentSessions(bus)
  t.throws(() => sessions.start('', 'websocket'), /agent name/)
  t.throws(() => sessions.start('helper', ''), /transport/)
  t.equal(started, 0)
  t.equal(sessions.activeCount(), 0)
  t.equal(sessions.end('no-such-session'), false)
})

t.test('duration and activity follow the clock given', async (t) => {
  let now = 1_000_000
  const bus = new EventBus()
  const ended: PlatformEvent<'AgentSessionEnded'>[] = []
  bus.on('AgentSessionEnded', (e) => ended.push(e))
  const sessions = new AgentSessions(bus, () => now)
  const s = sessions.start('helper', 'sse')
  now += 250
  sessions.touch(s.sessionId)
  t.equal(sessions.get(s.sessionId)!.lastActivity, new Date(1_000_250).toISOString())
  now += 750
  sessions.end(s.sessionId)
  t.match(ended, [{ duration: 1000, messageCount: 1 }])
  t.equal(sessions.get(s.sessionId), undefined)
})
