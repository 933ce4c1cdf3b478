import t from 'tap'
import { PassList } from '../../runtime/ai/pass-list.js'

t.test('a pass list holds what was pushed, in order, and lets it go when cleared', async (t) => {
  const list = new PassList<{ id: number }>()
  for (const count of [3, 40, 1, 0, 40]) {
    const items = Array.from({ length: count }, (_, id) => ({ id }))
    t.same(
      items.map((item) => list.push(item)),
      items.map((_, i) => i + 1),
      `${count} items: push answers the new size`
    )
    t.equal(list.size, count)
    t.same(
      Array.from({ length: list.size }, (_, i) => list.at(i)),
      items,
      `${count} items: read back in order`
    )
    list.clear()
    t.equal(list.size, 0, `${count} items: empty once cleared`)
    // a slot a shorter pass leaves unwritten no longer holds the item of an earlier one
    t.equal(list.at(0), undefined, `${count} items: no slot still holds one`)
  }
})

t.test('an item pushed while the list is read is read in the same pass', async (t) => {
  const list = new PassList<number>()
  list.push(1)
  const seen: number[] = []
  for (let i = 0; i < list.size; i++) {
    const n = list.at(i)
    seen.push(n)
    if (n < 3) list.push(n + 1)
  }
  t.same(seen, [1, 2, 3])
})
