import t from 'tap'
import { stepFrame } from '../../runtime/interactions/stream-session.js'
import type { InteractionStep } from '../../runtime/interactions/index.js'

const step = (seq: number, text: string): InteractionStep => ({
  seq,
  type: 'text',
  text,
  toolName: null,
  data: {},
  usage: null,
  createdAt: '2026-11-24T00:00:00.000Z'
})

t.test('a step frame is always the frame of the step asked for, whatever was asked before', async (t) => {
  const a = step(0, 'a')
  const b = step(1, 'b')
  const frame = (s: InteractionStep) => `{"type":"interaction-step","step":${JSON.stringify(s)}}`
  for (const s of [a, a, b, a, b, b, step(1, 'b2')]) t.equal(stepFrame(s), frame(s), `seq ${s.seq} ${s.text}`)
  t.same(JSON.parse(stepFrame(a)), { type: 'interaction-step', step: a })
})
