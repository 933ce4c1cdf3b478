import type { Test } from 'tap'
import type { LogPage, LogPart } from '../../runtime/store/index.js'

/**
 * A log as the admin routes read it (the control audit log, the decision log): entries recorded
 * with a number the test can read back, and `read`, one page below a cursor.
 */
export interface LogUnderTest {
  /** Records entry `n`: a known caller's (`main`) or an anonymous one. */
  record(n: number, part: LogPart): Promise<void>
  read(limit: number, cursor?: string, part?: LogPart): Promise<LogPage<unknown> | undefined>
  /** The number an entry was recorded with. */
  numberOf(entry: unknown): number
  /** The order of a page's entries: the decision log answers newest first, the audit log oldest first. */
  pageOrder: 'newest-first' | 'oldest-first'
}

/** The log contract, run unchanged against every kind of store (memory, LMDB, PostgreSQL). */
export function runLogContract(t: Test, name: string, make: (t: Test) => Promise<LogUnderTest>): void {
  t.test(`${name}: log contract`, async (t) => {
    /** Every entry of every page from the newest, newest first, with the pages read. */
    const walk = async (log: LogUnderTest, limit: number, part?: LogPart, between?: () => Promise<void>) => {
      const seen: number[] = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = await log.read(limit, cursor, part)
        if (page === undefined) throw new Error('a cursor the log wrote was refused')
        const nums = page.entries.map((e) => log.numberOf(e))
        seen.push(...(log.pageOrder === 'oldest-first' ? nums.reverse() : nums))
        cursor = page.nextCursor
        pages++
        await between?.()
      } while (cursor !== undefined && pages < 100)
      return { seen, pages }
    }

    t.test('a read lists what was recorded, newest first across pages, each once', async (t) => {
      const log = await make(t)
      for (let n = 1; n <= 23; n++) await log.record(n, 'main')
      const first = await log.read(5)
      const nums = first!.entries.map((e) => log.numberOf(e))
      t.same(log.pageOrder === 'oldest-first' ? nums : nums.reverse(), [19, 20, 21, 22, 23], 'the newest five')
      const { seen, pages } = await walk(log, 5)
      t.same(
        seen,
        Array.from({ length: 23 }, (_, i) => 23 - i),
        'every entry once'
      )
      t.equal(pages, 5, 'five pages of five')
    })

    t.test('entries recorded while a reader pages never shift its pages or show up in them', async (t) => {
      const log = await make(t)
      for (let n = 1; n <= 12; n++) await log.record(n, 'main')
      let next = 100
      const { seen } = await walk(log, 4, undefined, () => log.record(next++, 'main'))
      t.same(
        seen,
        Array.from({ length: 12 }, (_, i) => 12 - i),
        'the entries there when it began'
      )
      const newest = await log.read(1)
      t.equal(log.numberOf(newest!.entries[0]), next - 1, 'a new read starts at the newest')
    })

    t.test('a part lists only its entries; without one, both parts, each in its order', async (t) => {
      const log = await make(t)
      const parts: LogPart[] = ['main', 'anonymous', 'anonymous', 'main', 'anonymous', 'main', 'main']
      for (let n = 1; n <= parts.length; n++) await log.record(n, parts[n - 1]!)
      t.same((await walk(log, 2, 'main')).seen, [7, 6, 4, 1], 'main')
      t.same((await walk(log, 2, 'anonymous')).seen, [5, 3, 2], 'anonymous')
      // merged by time: entries of the two parts within one millisecond may come in either order
      const both = (await walk(log, 3)).seen
      t.same(
        [...both].sort((x, y) => y - x),
        [7, 6, 5, 4, 3, 2, 1],
        'both: every entry once'
      )
      t.same(
        both.filter((n) => parts[n - 1] === 'main'),
        [7, 6, 4, 1],
        "both: main's in its order"
      )
    })

    t.test('a cursor is refused for another part, and anything not a cursor is refused', async (t) => {
      const log = await make(t)
      for (let n = 1; n <= 6; n++) await log.record(n, 'main')
      const main = (await log.read(2, undefined, 'main'))!.nextCursor!
      t.ok(main, 'a cursor while older entries remain')
      t.equal(await log.read(2, main, 'anonymous'), undefined, 'not for another part')
      t.equal(await log.read(2, main), undefined, 'nor for both parts')
      t.equal(await log.read(2, 'bm90IGEgY3Vyc29y'), undefined, 'base64 of something else')
      t.equal(await log.read(2, '!!'), undefined, 'not base64url')
      t.equal(await log.read(2, 'x'.repeat(600)), undefined, 'too long')
    })
  })
}
