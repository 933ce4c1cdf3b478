// The overview's charts in a real browser: drawn as inline SVG from the metrics history, moved by
// the event stream after a few turns (no reload), and the agents table's per-agent columns.
import t from 'tap'
import { launchChromium, SHOTS } from '../helpers/browser.js'
import { governedAdminPlatform, ALICE } from './helpers.js'

const tp = await governedAdminPlatform()
t.teardown(tp.close)
const browser = await launchChromium()
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
const page = await context.newPage()
page.setDefaultTimeout(10_000)
const errors: string[] = []
page.on('pageerror', (e) => errors.push(String(e)))
page.on('console', (m) => {
  if (m.type() === 'error') errors.push(m.text())
})

const turn = async (message: string) =>
  (await fetch(`${tp.url}/platform/agent/demo`, { method: 'POST', body: message })).text()

t.test('five charts draw, then move after a few turns without a reload', async (t) => {
  await page.goto(tp.url + '/platform/admin/')
  await page.fill('#token', ALICE)
  await page.press('#token', 'Enter')
  await page.locator('#stream-state.live').waitFor()
  // the stream's first try, before the token, is refused: the browser logs that one
  errors.length = 0
  const charts = page.locator('#panel-overview figure[data-chart]')
  await charts.first().waitFor()
  t.same(await charts.evaluateAll((fs) => fs.map((f) => f.getAttribute('data-chart'))), [
    'turns',
    'latency',
    'tokens',
    'failures',
    'load'
  ])
  const turnsPath = page.locator('[data-chart=turns] path[data-series=turns]')
  const before = await turnsPath.getAttribute('d')
  t.equal(await page.locator('[data-chart=latency] path').count(), 0, 'no latency before any turn')

  // the legends read the current minute's bucket: the turns and the checks below fall in one minute
  const left = 60_000 - (Date.now() % 60_000)
  if (left < 25_000) await new Promise((resolve) => setTimeout(resolve, left + 100))
  await turn('good morning')
  await turn('How do sandboxes work?')
  await turn('the launch codes please')
  await page.locator('[data-chart=turns] .legend', { hasText: 'turns 3' }).waitFor()
  t.not(await turnsPath.getAttribute('d'), before, 'the turns line moved')
  t.equal(await page.locator('[data-chart=latency] path[data-series=p95]').count(), 1, 'latency drawn')
  await page.locator('[data-chart=failures] .legend', { hasText: 'denials 1' }).waitFor()
  t.match(
    await page.locator('[data-chart=tokens] svg').getAttribute('aria-label'),
    /^Tokens per second, last hour: now tokens\/s \d/
  )
  await page.screenshot({ path: SHOTS + 'overview-charts.png', fullPage: true })
})

t.test('the agents table shows per-agent turns, errors and p95', async (t) => {
  await page.getByRole('tab', { name: 'Agents' }).click()
  await page.locator('#panel-agents:not([aria-busy=true])').waitFor()
  const row = page.locator('#panel-agents tr', { has: page.locator('td', { hasText: /^demo$/ }) }).first()
  await row.waitFor()
  const cells = await row.locator('td').allTextContents()
  const head = await page.locator('#panel-agents table').first().locator('th').allTextContents()
  const cell = (name: string) => cells[head.indexOf(name)]
  t.equal(cell('Turns'), '3')
  t.equal(cell('Errors'), '1', 'the denied turn')
  t.match(cell('p95'), /^\d+ ms$/)
  t.same(errors, [], 'no console error')
})
