// The Governance tab's decision viewer in a real browser (Debian's chromium through playwright-core)
// against a real platform whose demo agent runs under a deny policy: decisions made after the page
// opened appear live on top, the filters hide non-matching live rows, pause holds rows back, and the
// log is read once (no reload under the reader). Screenshots go to test-artifacts/dashboard/.
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { launchChromium, SHOTS } from '../helpers/browser.js'
import { governedAdminPlatform, call, ALICE } from './helpers.js'
import { agentSocket } from '../ai/agent-clients.js'

const tp = await governedAdminPlatform()
t.teardown(tp.close)
const agent = await agentSocket(tp.url, '/platform/agent/demo')
t.teardown(() => agent.ws.close())

/** A turn the deny policy refuses; resolves once the agent endpoint answered it. */
async function denied(text = 'the launch codes'): Promise<void> {
  const frames = await agent.turn(text)
  if (frames.at(-1)?.type !== 'error') throw new Error('expected a denied turn: ' + JSON.stringify(frames.at(-1)))
}

await denied('launch codes before the page opened')

const browser: Browser = await launchChromium()
const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
const page: Page = await context.newPage()
page.setDefaultTimeout(8000)
const pageErrors: string[] = []
page.on('pageerror', (e) => pageErrors.push(String(e)))
const logReads: string[] = []
page.on('request', (r) => {
  if (r.url().includes('/governance/decisions')) logReads.push(r.url())
})

await page.goto(tp.url + '/platform/admin/#overview')
await page.fill('#token', ALICE)
await page.press('#token', 'Enter')
await page.locator('#stream-state.live').waitFor()
const panel = page.locator('#panel-governance')
const rows = panel.locator('.decision-viewer tbody tr')

t.test('decisions from before and while the tab was closed are shown once, from the log', async (t) => {
  // made while the page is open on another tab: it reaches the viewer live and through the log
  await denied('launch codes while on the overview')
  await page.getByRole('tab', { name: 'Governance' }).click()
  await panel.locator(':scope:not([aria-busy=true])').waitFor()
  const logged = (await call(tp, 'GET', '/governance/decisions?limit=200', { token: ALICE })).body as unknown[]
  await rows.nth(logged.length - 1).waitFor()
  t.equal(await rows.count(), logged.length, 'one row per logged decision, none twice')
  t.equal(await rows.locator('td:nth-child(3)', { hasText: 'no-launch-codes' }).count(), 2, 'both denies')
  t.match(await panel.locator('.decision-viewer .toolbar').textContent(), new RegExp(`${logged.length} decisions`))
  t.equal(logReads.length, 1, 'the log was read once')
})

t.test('a decision made after the page opened appears on top from the stream', async (t) => {
  const before = await rows.count()
  await denied('launch codes, live')
  const started = Date.now()
  // the latency is reported, not asserted: a loaded CI machine must not fail a correct page
  await rows.nth(before).waitFor({ timeout: 10_000 })
  t.comment(`appeared ${Date.now() - started} ms after the turn's error frame`)
  const top = rows.first()
  t.equal(await top.getAttribute('data-decision'), 'deny')
  t.equal(await top.getAttribute('data-policy'), 'no-launch-codes')
  t.match(await top.getAttribute('class'), /\bnew\b/, 'highlighted')
  t.match(
    await top.textContent(),
    /deny.*no-launch-codes.*pre_admission.*demo.*deny-list: request matched a denied phrase/
  )
  t.equal(logReads.length, 1, 'no reload: the row came from the stream')
  await page.screenshot({ path: SHOTS + 'decisions-live-1280.png' })
})

t.test('the filters apply to live rows: non-matching ones arrive hidden', async (t) => {
  await panel.getByLabel('Filter by decision').selectOption('deny')
  const admits = panel.locator('.decision-viewer tbody tr[data-decision=admit]')
  const admitsBefore = await admits.count()
  // an admitted turn: every evaluation admits
  t.match((await agent.turn('What is a sandbox?')).at(-1), { event: 'complete' })
  await admits.nth(admitsBefore).waitFor({ state: 'attached' })
  t.equal(
    await panel.locator('.decision-viewer tbody tr[data-decision=admit]:visible').count(),
    0,
    'live admits hidden'
  )
  await denied('launch codes under the filter')
  const visibleDenies = panel.locator('.decision-viewer tbody tr[data-decision=deny]:visible')
  await visibleDenies.nth(3).waitFor()
  t.match(await panel.locator('.decision-viewer .toolbar').textContent(), /4 of \d+ decisions/)

  // by policy: another policy's live deny arrives hidden
  await panel.getByLabel('Filter by policy').fill('scope')
  await panel.getByText('No decisions match the filter.').waitFor()
  const deniesBefore = await panel.locator('.decision-viewer tbody tr[data-decision=deny]').count()
  await denied('launch codes under the policy filter')
  await panel.locator('.decision-viewer tbody tr[data-decision=deny]').nth(deniesBefore).waitFor({ state: 'attached' })
  t.equal(await visibleDenies.count(), 0, 'a no-launch-codes deny stays hidden under "scope"')
  await panel.getByLabel('Filter by policy').fill('no-launch')
  await visibleDenies.nth(4).waitFor()
  t.equal(await visibleDenies.count(), 5)
  await panel.getByLabel('Filter by policy').fill('')
  await panel.getByLabel('Filter by decision').selectOption('')
})

t.test('pause holds live rows back, counted; resume puts them on top', async (t) => {
  const before = await rows.count()
  await panel.getByRole('button', { name: 'Pause' }).click()
  await denied('launch codes while paused')
  await panel.getByText(/\d+ new while paused/).waitFor()
  t.equal(await rows.count(), before, 'nothing added while paused')
  await panel.getByRole('button', { name: 'Resume' }).click()
  await rows.nth(before).waitFor()
  t.equal(await rows.first().getAttribute('data-decision'), 'deny')
  t.equal(await panel.getByText(/new while paused/).count(), 0)
  t.same(pageErrors, [], 'no page errors')
})

t.test('a control action redraws the tab; the viewer keeps its rows and scroll position', async (t) => {
  for (let i = 0; i < 25; i++) await denied(`launch codes ${i}`)
  const total = (await call(tp, 'GET', '/governance/decisions?limit=200', { token: ALICE })).body.length as number
  await rows.nth(total - 1).waitFor()
  const box = panel.locator('.decision-viewer .scroll')
  await box.evaluate((b) => {
    b.scrollTop = 300
    b.querySelector('tbody tr:nth-child(5)')!.setAttribute('data-mark', 'kept')
  })
  t.equal(await box.evaluate((b) => b.scrollTop), 300, 'the box scrolls')
  // the kill switch card is rebuilt by every redraw: once it is gone, the tab was redrawn
  await panel
    .locator('section.card')
    .first()
    .evaluate((c) => c.setAttribute('data-old', ''))
  // a refused write is a control action too: the tab redraws on it
  t.equal((await call(tp, 'DELETE', '/resources/nobody', { token: 'not-a-token' })).status >= 400, true)
  await panel.locator('section.card[data-old]').waitFor({ state: 'detached' })
  await panel.locator(':scope:not([aria-busy=true])').waitFor()
  t.equal(await panel.locator('.decision-viewer tbody tr[data-mark=kept]').count(), 1, 'the same rows, not rebuilt')
  t.equal(await box.evaluate((b) => b.scrollTop), 300, 'the scroll position survived the redraw')
  t.equal(logReads.length, 1, 'the log was not read again')
  t.same(pageErrors, [], 'no page errors')
})

t.test('a page opened on the tab shows the stream replay and the log as one list', async (t) => {
  // the first page watches, so the stream keeps its decisions: a new page gets them in its replay too
  const p = await context.newPage()
  p.on('pageerror', (e) => pageErrors.push(String(e)))
  await p.goto(tp.url + '/platform/admin/#governance')
  await p.fill('#token', ALICE)
  await p.press('#token', 'Enter')
  await p.locator('#stream-state.live').waitFor()
  const list = p.locator('#panel-governance .decision-viewer tbody tr')
  // a decision after the replay: once its row is there, the replay was handled
  const before = (await call(tp, 'GET', '/governance/decisions?limit=200', { token: ALICE })).body.length as number
  await denied('launch codes for the second page')
  await list.nth(before).waitFor()
  const logged = (await call(tp, 'GET', '/governance/decisions?limit=200', { token: ALICE })).body.length as number
  t.equal(await list.count(), logged, 'each decision once')
  t.same(pageErrors, [], 'no page errors')
  await p.close()
})
