import t from 'tap'
import { TextBuffer } from '../../runtime/ai/text-buffer.js'

t.test('a text buffer gives back exactly what was pushed, across its flattening points', async (t) => {
  for (const count of [0, 1, 31, 32, 33, 64, 65, 200]) {
    const b = new TextBuffer()
    const pieces = Array.from({ length: count }, (_, i) => (i % 7 === 0 ? '' : `p${i} `))
    for (const p of pieces) b.push(p)
    t.equal(b.text(), pieces.join(''), `${count} pieces`)
    // reading does not consume: more pieces extend the same text
    const mark = b.length
    t.equal(mark, pieces.join('').length, `${count} pieces: their length`)
    b.push('end')
    t.equal(b.text(), pieces.join('') + 'end', `${count} pieces, then one more`)
    t.equal(b.since(mark), 'end', `${count} pieces: what came after the mark`)
  }
})
