/**
 * "Files of a few hundred lines, named after the one thing they hold" (docs/architecture.md): a
 * runtime file over MAX_LINES holds more than one thing, so it is split along a seam, not grown.
 * A file that must stay longer is listed in LONGER with why; none does today.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { rel, runtimeFiles } from './import-graph.js'

const MAX_LINES = 400

/** `runtime/...` path -> why it may be longer than MAX_LINES (and the most it may grow to). */
const LONGER = new Map<string, { why: string; max: number }>()

const lineCount = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0)

t.test(`no runtime file is longer than ${MAX_LINES} lines`, async (t) => {
  const bad: string[] = []
  for (const file of runtimeFiles()) {
    const path = rel(file)
    const lines = lineCount(readFileSync(file, 'utf8'))
    const allowed = LONGER.get(path)?.max ?? MAX_LINES
    if (lines > allowed)
      bad.push(
        `${path}: ${lines} lines (at most ${allowed}); split it along a seam into files named after the one thing each holds`
      )
  }
  t.same(bad, [], bad.join('\n'))
})

t.test('every listed exception still needs its place', async (t) => {
  const stale = [...LONGER.keys()].filter((path) => {
    const file = runtimeFiles().find((f) => rel(f) === path)
    return file === undefined || lineCount(readFileSync(file, 'utf8')) <= MAX_LINES
  })
  t.same(stale, [], `drop from LONGER: ${stale.join(', ')}`)
})
