// Each refusal the dashboard meets is named by its real cause, read from the error code of the
// answer (a 403 is a switched-off surface as often as a missing role): admin writes off, no token,
// a token without the role, a token nobody configured, interaction writes off, and an empty
// interactions list that is empty only because no token was given.
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../helpers/browser.js'
import { INTERACTIONS } from '../../runtime/interactions/key.js'
import { adminPlatform, ALICE, BOB, TOKENS, WRITER } from './helpers.js'

const writable = await adminPlatform({ ...WRITER, 'platform.ai.governance.kill-switch.enabled': true })
t.teardown(writable.close)
// admin and interaction writes off (the defaults), tokens configured
const readOnly = await adminPlatform({
  'platform.auth.tokens': TOKENS,
  'platform.ai.governance.kill-switch.enabled': true
})
t.teardown(readOnly.close)

const browser: Browser = await launchChromium()

/** A fresh page on `url` with `token` entered (none when undefined); confirmations accepted. */
async function open(url: string, token: string | undefined): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  t.teardown(() => context.close())
  const page = await context.newPage()
  page.setDefaultTimeout(8000)
  page.on('dialog', (d) => void d.accept())
  await page.goto(url)
  if (token !== undefined) {
    await page.fill('#token', token)
    await page.press('#token', 'Enter')
  }
  return page
}

/** Arms the kill switch from the Governance tab; the text of the refusal shown. */
async function arm(base: string, token: string | undefined): Promise<string> {
  const page = await open(base + '/platform/admin/#governance', token)
  const panel = page.locator('#panel-governance')
  await panel.getByLabel('Reason').waitFor()
  await panel.locator(':scope:not([aria-busy=true])').waitFor()
  await panel.getByLabel('Reason').fill('drill')
  await panel.getByRole('button', { name: 'Arm' }).click()
  const err = panel.locator('.error').first()
  await err.waitFor()
  return (await err.textContent()) ?? ''
}

t.test('admin writes off: says so and names the key, whatever the token', async (t) => {
  const said = await arm(readOnly.url, ALICE)
  t.match(
    said,
    /^Admin writes are turned off on this platform, whatever the token: .*platform\.admin\.http-write-enabled: true/
  )
  t.match(said, '(PLT_ERR_ADMIN_WRITE_DISABLED)')
  t.notMatch(said, /role|token field/)
})

t.test('no token: says none was given and how to get one', async (t) => {
  const said = await arm(writable.url, undefined)
  t.match(said, /^No token: this needs one\. Paste an API token in the token field .*token create/)
  t.match(said, '(PLT_ERR_ADMIN_AUTH_REQUIRED)')
})

t.test('a token nobody configured: says it was not accepted', async (t) => {
  const said = await arm(writable.url, 'not-a-configured-token-0123')
  t.match(said, /^The token in the field at the top was not accepted/)
})

t.test('a token without the role: says the token is valid and the role is missing', async (t) => {
  const said = await arm(writable.url, BOB)
  t.match(said, /^Your token is valid but lacks the role this needs/)
  t.match(said, '(PLT_ERR_ADMIN_ROLE_REQUIRED)')
})

t.test('interaction writes off: deleting an interaction says so and names the key', async (t) => {
  const made = await readOnly.platform.area(INTERACTIONS).create('alice', {
    message: 'kept while writes are off',
    background: false,
    store: true
  })
  const page = await open(readOnly.url + '/platform/admin/#interactions', ALICE)
  const panel = page.locator('#panel-interactions')
  await panel.getByRole('button', { name: made.id }).click()
  await panel.getByRole('button', { name: 'Delete' }).click()
  const err = panel.locator('.error').first()
  await err.waitFor()
  const said = (await err.textContent()) ?? ''
  t.match(
    said,
    /^Interaction writes are turned off on this platform, whatever the token: .*platform\.interactions\.http-write-enabled: true/
  )
  t.match(said, '(PLT_ERR_INTERACTIONS_WRITE_DISABLED)')
  t.equal(await panel.getByRole('button', { name: made.id }).count(), 1, 'nothing deleted')
})

t.test('the interactions list without a token says a token is missing, not that there are none', async (t) => {
  const page = await open(readOnly.url + '/platform/admin/#interactions', undefined)
  await page.locator('#panel-interactions').getByText('No token given: interactions are listed per token').waitFor()
  t.pass('shown')
})
