import t from 'tap'
import { AI } from '../../runtime/ai/index.js'
import { conversationKey } from '../../runtime/interactions/conversation-key.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { ALICE, BOB, startInteractions } from './helpers.js'

t.test('continue: same conversation, parentId set, history from memory, never another owner’s', async (t) => {
  const model = await new OpenAiServer().start()
  t.teardown(() => model.close())
  const tp = await startInteractions({
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model'
  })
  t.teardown(tp.close)
  const { api } = tp
  const answers = ['Hi Ann.', 'Your name is Ann.', 'Still Ann.']
  let n = 0
  model.chat = () => ({ stream: sseEvents([deltaChunk({ content: answers[n++] ?? 'more' }, 'stop')]) })

  const first = (await api.create({ message: 'My name is Ann.', systemPrompt: 'Be brief.' })).body
  t.equal(first.status, 'COMPLETED')
  const second = await api.call('POST', `/api/interactions/${first.id}/continue`, {
    token: ALICE,
    body: { message: 'What is my name?' }
  })
  t.equal(second.status, 200)
  t.match(second.body, {
    parentId: first.id,
    conversationId: first.conversationId,
    status: 'COMPLETED',
    finalText: 'Your name is Ann.'
  })
  t.same(
    model.on('/chat/completions')[1].messages,
    [
      { role: 'user', content: 'My name is Ann.' },
      { role: 'assistant', content: 'Hi Ann.' },
      { role: 'user', content: 'What is my name?' }
    ],
    'the earlier turn from memory, the new message, and no system prompt: it is turn-scoped, not inherited'
  )

  // previousInteractionId on create is the same chain
  const third = (await api.create({ message: 'And now?', previousInteractionId: second.body.id })).body
  t.match(third, { parentId: second.body.id, conversationId: first.conversationId, finalText: 'Still Ann.' })
  t.equal(model.on('/chat/completions')[2].messages.filter((m: any) => m.role !== 'system').length, 5)

  const memory = tp.platform.area(AI).memory
  t.equal((await memory.read(conversationKey('alice', first.conversationId))).length, 6)
  t.same(await memory.read(conversationKey('bob', first.conversationId)), [], 'keyed by owner too')
  t.same(await memory.read(first.conversationId), [], 'not under the bare conversation id')

  const prev = { error: 'Unknown or unauthorized previous interaction', code: 'PLT_ERR_INTERACTION_PREVIOUS_UNKNOWN' }
  const stolen = await api.call('POST', `/api/interactions/${first.id}/continue`, {
    token: BOB,
    body: { message: 'What is her name?' }
  })
  t.same([stolen.status, stolen.body], [400, prev], 'another owner cannot chain onto it')
  t.same((await api.create({ message: 'x', previousInteractionId: first.id }, BOB)).body, prev)
  t.same(
    (await api.call('POST', '/api/interactions/int-missing/continue', { token: ALICE, body: { message: 'x' } })).body,
    prev
  )
  t.equal(
    (await api.call('POST', '/api/interactions/a.b/continue', { token: ALICE, body: { message: 'x' } })).body.code,
    'PLT_ERR_INTERACTION_ID_INVALID'
  )
  t.equal(model.on('/chat/completions').length, 3, 'no refused continue reached the model')

  t.test('a failed turn adds nothing to the conversation; store:false keeps none', async (t) => {
    model.chat = () => ({ status: 500, json: { error: { message: 'down' } } })
    const failed = (await api.create({ message: 'Forget this.', previousInteractionId: third.id })).body
    t.equal(failed.status, 'FAILED')
    t.equal((await memory.read(conversationKey('alice', first.conversationId))).length, 6)
    model.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'ok' }, 'stop')]) })
    const eph = (await api.create({ message: 'ephemeral', store: false })).body
    t.equal(eph.status, 'COMPLETED')
    t.same(await memory.read(conversationKey('alice', eph.conversationId)), [])
    const r = await api.call('POST', `/api/interactions/${eph.id}/continue`, { token: ALICE, body: { message: 'x' } })
    t.same(r.body, prev, 'nothing to chain onto')
  })
})
