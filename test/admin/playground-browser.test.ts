// The playground in a real browser against the bundled plugins: a turn with a tool call over the
// demo agent's WebSocket endpoint (frames, usage, its decisions from the log), the same recorded
// as an interaction whose link opens it, a denied turn, a coordinator's turn linking to its
// coordination in the journal, and what the tab says without a token.
import t from 'tap'
import type { Page } from 'playwright-core'
import { launchChromium, SHOTS } from '../helpers/browser.js'
import { governedAdminPlatform, ALICE } from './helpers.js'

const tp = await governedAdminPlatform({ 'platform.interactions.http-write-enabled': true })
t.teardown(tp.close)
const browser = await launchChromium()
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
const page: Page = await context.newPage()
page.setDefaultTimeout(10_000)
const errors: string[] = []
page.on('pageerror', (e) => errors.push(String(e)))
page.on('console', (m) => {
  if (m.type() === 'error') errors.push(m.text())
})

const panel = page.locator('#panel-playground')
const newest = panel.locator('li.turn').first()

/** Sends `message` to `agent` from the playground and waits for the turn to end (its links laid out). */
async function ask(agent: string, message: string, record = false): Promise<void> {
  const before = await panel.locator('li.turn').count()
  await panel.getByLabel('Agent').selectOption(agent)
  await panel.getByLabel('Record as an interaction').setChecked(record)
  await panel.getByLabel('Message').fill(message)
  await panel.getByRole('button', { name: 'Send' }).click()
  await panel.locator('li.turn').nth(before).waitFor()
  await newest.locator('.turn-decisions:not(:has-text("reading"))').waitFor()
}

t.test('without a token the tab says what to do, and recording a turn is refused by its cause', async (t) => {
  await page.goto(tp.url + '/platform/admin/#playground')
  await panel.getByLabel('Agent').locator('option[value=demo]').waitFor({ state: 'attached' })
  t.match(await panel.locator('p.muted').first().textContent(), /^No token: .*token field at the top.*token create/)
  await panel.getByLabel('Record as an interaction').check()
  await panel.getByLabel('Message').fill('hello')
  await panel.getByRole('button', { name: 'Send' }).click()
  t.match(await panel.locator('.error').textContent(), /^No token: this needs one\./)
  t.equal(await panel.locator('li.turn').count(), 0, 'no turn started')
})

t.test('a turn with a tool call over the agent endpoint: frames, usage and its decisions', async (t) => {
  await page.fill('#token', ALICE)
  await page.press('#token', 'Enter')
  await page.locator('#stream-state.live').waitFor()
  // the admin stream, refused (and retried) until the token came, is logged by the browser: not a page error
  errors.length = 0
  t.equal((await panel.locator('p.muted').first().textContent())?.startsWith('Turns run as the principal'), true)
  await ask('demo', 'What is a sandbox?')
  const kinds = await newest.locator('li.step').evaluateAll((ls) => ls.map((l) => l.getAttribute('data-kind')))
  const order = ['tool call', 'tool result', 'text', 'usage'].map((k) => kinds.indexOf(k))
  t.ok(
    order.every((i, n) => i >= 0 && (n === 0 || i > order[n - 1]!)),
    `tool call, result, text, usage in order: ${kinds.join(', ')}`
  )
  t.match(await newest.locator('[data-kind="tool call"]').textContent(), /platform_fact topic=sandbox/)
  // a decision arriving on the admin stream between two deltas starts a new text step
  const text = (await newest.locator('[data-kind=text]').allTextContents()).map((s) => s.replace(/^text/, ''))
  t.match(text.join(''), /According to platform_fact/)
  t.match(await newest.locator('[data-kind=usage]').textContent(), /\d+ in · \d+ out · \d+ tokens/)
  t.match(await newest.locator('.prompt .badge').last().textContent(), 'completed')
  // the deny-list policy admitted this turn, before and after the model: read back from the log by session
  const decided = newest.locator('.decisions li[data-policy=no-launch-codes]')
  t.ok((await decided.count()) >= 1, 'the policy decisions of this turn')
  t.match(await decided.first().textContent(), /admit/)
  const phases = await newest.locator('.decisions li').allTextContents()
  t.ok(
    phases.some((p) => p.includes('post_response')),
    'the answer was checked too'
  )
  t.ok(
    phases.some((p) => p.includes('tool call platform_fact')),
    "the tool call's decisions are the turn's"
  )
  t.match(await newest.locator('.turn-links').textContent(), /Interaction: none/)
})

t.test('a denied turn shows the error frame and the deny decision', async (t) => {
  await ask('demo', 'the launch codes please')
  t.match(await newest.locator('[data-kind=error]').textContent(), /denied by policy no-launch-codes/)
  t.match(await newest.locator('.decisions li[data-policy=no-launch-codes]').first().textContent(), /deny/)
  // denied on admission, it never reached the model: a post-response entry would be the earlier turn's
  t.equal(
    await newest.locator('.decisions li', { hasText: 'post_response' }).count(),
    0,
    "only this turn's decisions: the earlier turn's on the same session are not repeated"
  )
})

t.test('recorded as an interaction: the same frames, and the link opens its interaction', async (t) => {
  await ask('demo', 'How do sandboxes work?', true)
  t.match(await newest.locator('[data-kind="tool call"]').textContent(), /platform_fact/)
  t.match(await newest.locator('[data-kind="tool result"]').textContent(), /platform_fact: /)
  // one usage step per model round (the tool call's, the answer's)
  t.match(await newest.locator('[data-kind=usage]').last().textContent(), /tokens/)
  const decided = await newest.locator('.decisions li').allTextContents()
  t.ok(
    decided.some((d) => d.includes('pre_admission')) && decided.some((d) => d.includes('post_response')),
    "the turn's own decisions, by its conversation"
  )
  t.ok(
    decided.some((d) => d.includes('tool call platform_fact')),
    "and its tool call's, by agent and user between them"
  )
  const link = newest.locator('.turn-links a', { hasText: /^int-/ })
  const id = await link.textContent()
  await page.screenshot({ path: SHOTS + 'playground.png', fullPage: true })
  await link.click()
  const detail = page.locator('#panel-interactions')
  await detail.getByRole('heading', { name: `Interaction ${id}` }).waitFor()
  await detail.locator('.timeline .step', { hasText: 'platform_fact' }).first().waitFor()
  t.match(page.url(), `#interactions?id=${id}`)
  await detail.getByText('COMPLETED').first().waitFor()
})

t.test("a coordinator's turn links to its coordination in the journal", async (t) => {
  await page.getByRole('tab', { name: 'Playground' }).click()
  await ask('panel', 'What is a sandbox?')
  const link = newest.locator('.turn-links a', { hasText: /^coord-/ })
  const id = await link.textContent()
  await link.click()
  const journal = page.locator('#panel-journal')
  await journal.locator('svg.graph').waitFor()
  t.equal(await journal.getByLabel('Coordination id').inputValue(), id)
  t.ok((await journal.locator('tbody tr').count()) >= 2, 'the dispatches of that coordination')
  t.same(errors, [], 'no console error')
})
