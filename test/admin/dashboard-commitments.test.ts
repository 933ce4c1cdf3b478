// The Governance tab's Commitments table in a real browser (Debian's chromium through
// playwright-core) against a real platform: records written through the commitment log, one
// altered in LMDB before a restart, one unsigned; the badge comes from the browser's own Ed25519
// check (WebCrypto, the platform-served canonicalize module), so a listing that lies about
// `verified` does not change it. Screenshot in test-artifacts/dashboard/.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { launchChromium, SHOTS } from '../helpers/browser.js'
import { COMMITMENTS } from '../../runtime/governance/index.js'
import { SignedCommitmentLog } from '../../runtime/governance/commitment-log.js'
import { type LoggedCommitment } from '../../runtime/contracts/index.js'
import { adminPlatform, ALICE, TOKENS } from './helpers.js'
import type { TestPlatform } from '../helpers/platform.js'

const XSS = '<img src=x onerror=alert(1)>'

const dataDir = mkdtempSync(join(tmpdir(), 'dashboard-commitments-'))
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
const config = {
  'platform.auth.tokens': TOKENS,
  'platform.data-dir': dataDir,
  'platform.ai.governance.commitment-records.enabled': true
}
const base = {
  coordinationId: 'coord-browser',
  issuer: 'coordinator:planner',
  principal: 'alice',
  scope: 'forecast',
  outcome: 'completed' as const
}

// written through the log's API, then one is altered in the store and the platform restarted
let tp: TestPlatform = await adminPlatform(config)
const log = tp.platform.area(COMMITMENTS)
await log.record({ ...base, subject: 'weather-agent', scope: XSS, properties: { city: 'Zürich', note: XSS } })
await log.record({ ...base, subject: 'billing-agent', properties: { amount: 10 } })
await log.append(new SignedCommitmentLog().issue({ ...base, subject: 'legacy-agent', outcome: 'started' }))
const db = tp.platform.store.db<LoggedCommitment | LoggedCommitment[], [number, number]>('commitments')
for (const { key, value } of db.getRange()) {
  for (const e of Array.isArray(value) ? value : [value])
    if (e.record.subject === 'billing-agent') e.record.properties = { amount: 10_000 }
  await db.put(key, value)
}
await tp.close()
tp = await adminPlatform(config)
t.teardown(() => tp.close())

const browser: Browser = await launchChromium()
const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
const dialogs: string[] = []
const pageErrors: string[] = []

async function governance(): Promise<Page> {
  const page = await context.newPage()
  page.setDefaultTimeout(8000)
  page.on('pageerror', (e) => pageErrors.push(String(e)))
  page.on('dialog', (d) => {
    dialogs.push(d.message())
    void d.dismiss()
  })
  await page.goto(tp.url + '/platform/admin/#governance')
  await page.fill('#token', ALICE)
  await page.press('#token', 'Enter')
  await page.locator('#panel-governance h2', { hasText: 'Commitments' }).waitFor()
  await page.locator('#panel-governance [data-verdict]').first().waitFor()
  return page
}

/** agent → the verdict badge's data-verdict and text, from the Commitments rows. */
async function verdicts(page: Page): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const card = page.locator('#panel-governance section', { has: page.locator('h2', { hasText: 'Commitments' }) })
  for (const row of await card.locator('tbody tr').all()) {
    const agent = await row.locator('td').nth(3).textContent()
    const badge = row.locator('[data-verdict]')
    out[agent!] = `${await badge.getAttribute('data-verdict')}:${await badge.textContent()}`
  }
  return out
}

t.test('verified, invalid (altered in the store) and unsigned, each checked in the browser', async (t) => {
  const page = await governance()
  t.same(await verdicts(page), {
    'weather-agent': 'verified:verified',
    'billing-agent': 'invalid:invalid',
    'legacy-agent': 'unsigned:unsigned'
  })
  const card = page.locator('#panel-governance section', { has: page.locator('h2', { hasText: 'Commitments' }) })
  t.equal(await card.getByText(XSS, { exact: true }).count(), 1, 'markup in a record is shown as text')
  const weather = card.locator('tr', { hasText: 'weather-agent' })
  await weather.locator('summary', { hasText: '2 arguments' }).click()
  t.match(
    await weather.locator('details pre').textContent(),
    /"city": "Zürich",\s+"note": "<img src=x onerror=alert\(1\)>"/
  )
  t.equal(await card.locator('img').count(), 0)
  t.match(await card.locator('.commitment-summary').textContent(), /1 verified.*1 invalid.*1 unsigned/)
  t.equal(await card.locator('.badge', { hasText: 'server says' }).count(), 0, 'the server agrees')
  await card.scrollIntoViewIfNeeded()
  await page.screenshot({ path: SHOTS + 'commitments-1280.png', fullPage: true })
  await page.close()
})

t.test('the badge is the browser’s verdict: a listing claiming every record verified changes nothing', async (t) => {
  const lied = await context.newPage()
  await lied.route('**/api/admin/governance/commitments?*', async (route) => {
    const res = await route.fetch()
    const rows = (await res.json()) as unknown
    // before the token is set the answer is a 401 error: passed on as it is
    const json = Array.isArray(rows) ? rows.map((r: object) => ({ ...r, verified: true, signed: true })) : rows
    await route.fulfill({ response: res, json })
  })
  lied.setDefaultTimeout(8000)
  lied.on('pageerror', (e) => pageErrors.push(String(e)))
  await lied.goto(tp.url + '/platform/admin/#governance')
  await lied.fill('#token', ALICE)
  await lied.press('#token', 'Enter')
  await lied.locator('#panel-governance [data-verdict]').first().waitFor()
  t.same(await verdicts(lied), {
    'weather-agent': 'verified:verified',
    'billing-agent': 'invalid:invalid',
    'legacy-agent': 'unsigned:unsigned'
  })
  t.equal(
    await lied.locator('#panel-governance .badge', { hasText: 'server says verified' }).count(),
    2,
    'the disagreement is shown'
  )
  await lied.close()
})

t.test('the canonicalize module is served by the platform as JavaScript', async (t) => {
  for (const prefix of ['/platform/admin', '/admin']) {
    const res = await fetch(`${tp.url}${prefix}/vendor/canonicalize.js`)
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), /^text\/javascript/)
    t.match(await res.text(), /export default function canonicalize/)
  }
})

t.test('no markup ran and no page error', async (t) => {
  t.same(dialogs, [])
  t.same(pageErrors, [])
})
