import t from 'tap'
import { isoDuration } from '../../runtime/interactions/iso-duration.js'

t.test('durations read as Java writes them, so the timeout message matches: timed out after PT2M', async (t) => {
  t.equal(isoDuration(120_000), 'PT2M', 'the default synchronous timeout')
  t.equal(isoDuration(90_000), 'PT1M30S')
  t.equal(isoDuration(400), 'PT0.4S')
  t.equal(isoDuration(3_600_000), 'PT1H')
  t.equal(isoDuration(3_723_500), 'PT1H2M3.5S')
  t.equal(isoDuration(0), 'PT0S')
})
