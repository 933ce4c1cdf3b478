import type { Test } from 'tap'
import type { AiMessage } from '../../runtime/ai/index.js'
import type { ConversationMemory } from '../../runtime/ai/memory.js'

const user = (content: string): AiMessage => ({ role: 'user', content })
const answer = (content: string): AiMessage => ({ role: 'assistant', content })

/**
 * The conversation memory contract, run against every store (in-process and LMDB) so the turn
 * pipeline can use either. `make(max)` returns a fresh, empty memory bounded to `max` messages.
 */
export function runMemoryContract(
  t: Test,
  name: string,
  make: (t: Test, max: number) => Promise<ConversationMemory>
): void {
  t.test(`${name}: conversation memory contract`, async (t) => {
    t.test('append then read: oldest first, conversations apart', async (t) => {
      const m = await make(t, 10)
      t.equal(m.kind, name)
      t.equal(m.maxMessages, 10)
      t.same(await m.read('a'), [], 'an unknown conversation is empty')
      await m.append('a', [user('hi'), answer('hello')])
      await m.append('b', [user('other')])
      await m.append('a', [user('again')])
      t.same(await m.read('a'), [user('hi'), answer('hello'), user('again')])
      t.same(await m.read('b'), [user('other')])
    })

    t.test('read(limit) gives the newest N in order', async (t) => {
      const m = await make(t, 10)
      await m.append('c', [user('1'), answer('2'), user('3'), answer('4')])
      t.same(await m.read('c', 2), [user('3'), answer('4')])
      t.same(await m.read('c', 0), [])
      t.same(await m.read('c', 99), [user('1'), answer('2'), user('3'), answer('4')])
    })

    t.test('bounded: the oldest are dropped', async (t) => {
      const m = await make(t, 3)
      for (let i = 0; i < 7; i++) await m.append('d', [user(`m${i}`)])
      t.same(await m.read('d'), [user('m4'), user('m5'), user('m6')])
      await m.append('d', [user('x'), user('y'), user('z'), user('w')])
      t.same(await m.read('d'), [user('y'), user('z'), user('w')], 'one append longer than the bound keeps its tail')
    })

    t.test('never a partial tool-call/tool-result pair', async (t) => {
      const m = await make(t, 4)
      const call: AiMessage = {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c1', name: 'lookup', arguments: { q: 'a' } },
          { id: 'c2', name: 'lookup', arguments: { q: 'b' } }
        ]
      }
      const r1: AiMessage = { role: 'tool', toolCallId: 'c1', name: 'lookup', content: 'A' }
      const r2: AiMessage = { role: 'tool', toolCallId: 'c2', content: 'B' }
      await m.append('e', [user('q'), call, r1, r2])
      t.same(await m.read('e'), [user('q'), call, r1, r2], 'fits exactly')
      await m.append('e', [answer('done')])
      // dropping the oldest (q) keeps the call and its results whole
      t.same(await m.read('e'), [call, r1, r2, answer('done')])
      await m.append('e', [user('next')])
      // the call goes, so its results go with it: fewer than the bound rather than orphans
      t.same(await m.read('e'), [answer('done'), user('next')])
      await m.append('f', [user('q'), call, r1, r2, answer('ok')])
      t.same(await m.read('f', 3), [answer('ok')], 'a read window does not start with orphaned results')
      t.same(await m.read('f', 4), [call, r1, r2, answer('ok')])
    })

    t.test('clear forgets one conversation', async (t) => {
      const m = await make(t, 10)
      await m.append('g', [user('1')])
      await m.append('h', [user('2')])
      t.equal(await m.clear('g'), true)
      t.equal(await m.clear('g'), false, 'nothing left to clear')
      t.same(await m.read('g'), [])
      t.same(await m.read('h'), [user('2')], 'the other conversation stays')
      await m.append('g', [user('3')])
      t.same(await m.read('g'), [user('3')], 'a cleared conversation starts afresh')
    })

    t.test('what is kept is a copy', async (t) => {
      const m = await make(t, 10)
      const msg = { role: 'user', content: 'original' } as { role: 'user'; content: string }
      await m.append('i', [msg])
      msg.content = 'changed'
      const read = await m.read('i')
      t.same(read, [user('original')])
      ;(read[0] as { content: string }).content = 'mutated'
      t.same(await m.read('i'), [user('original')])
    })

    t.test('bad input: a clear error and nothing changes', async (t) => {
      const m = await make(t, 10)
      await m.append('j', [user('kept')])
      const bad: [string, unknown, RegExp][] = [
        ['empty id', ['', [user('x')]], /conversation id/],
        ['long id', ['x'.repeat(257), [user('x')]], /conversation id/],
        ['not an array', ['j', user('x')], /array/],
        ['unknown role', ['j', [user('ok'), { role: 'system', content: 'x' }]], /message 1: role/],
        ['no content', ['j', [{ role: 'user' }]], /content/],
        ['tool without id', ['j', [{ role: 'tool', content: 'x' }]], /toolCallId/],
        [
          'bad call',
          ['j', [{ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'n', arguments: [] }] }]],
          /arguments/
        ]
      ]
      for (const [label, args, error] of bad) {
        const [id, msgs] = args as [string, AiMessage[]]
        await t.rejects(m.append(id, msgs), error, label)
      }
      t.same(await m.read('j'), [user('kept')], 'the conversation is unchanged')
      await t.rejects(m.read('j', -1), /limit/)
      await t.rejects(m.read(''), /conversation id/)
      await t.rejects(m.clear(''), /conversation id/)
    })
  })
}
