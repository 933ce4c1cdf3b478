import t from 'tap'
import { startInteractions } from './helpers.js'

// UUIDv7: 48 bits of milliseconds, then the version digit 7 and the variant (8, 9, a or b)
const ORDERED = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test(
  'interaction and conversation ids are time-ordered UUIDs: created one after another, they sort in that order',
  async (t) => {
    const tp = await startInteractions({ 'platform.ai.runtime': 'demo' })
    t.teardown(tp.close)
    const made: { id: string; conversationId: string }[] = []
    for (let i = 0; i < 5; i++) made.push((await tp.api.create({ message: `run ${i}` })).body)
    for (const m of made) {
      t.match(m.id.slice('int-'.length), ORDERED, m.id)
      t.match(m.conversationId.slice('conv-'.length), ORDERED, m.conversationId)
    }
    const ids = made.map((m) => m.id)
    t.same([...ids].sort(), ids, 'ids in creation order')
    const conversations = made.map((m) => m.conversationId)
    t.same([...conversations].sort(), conversations, 'conversation ids in creation order')
    t.equal(new Set(ids).size, 5)
  }
)
