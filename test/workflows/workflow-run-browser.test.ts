// The workflow page in a real browser (Debian's chromium) against a real platform and a real
// coordinator fleet: pick the coordinator, run the saved workflow, watch it park at its approval,
// be refused approving with the runner's token, approve with the approver's, and see the run end.
import t from 'tap'
import type { Page } from 'playwright-core'
import { launchChromium, SHOTS } from '../helpers/browser.js'
import { APPROVER, EDITOR, incident, save, workflowPlatform } from './workflow-fleet.js'

const tp = await workflowPlatform()
t.teardown(tp.close)
await save(tp, incident())

const browser = await launchChromium()
const page: Page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
page.setDefaultTimeout(8000)
const pageErrors: string[] = []
page.on('pageerror', (e) => pageErrors.push(String(e)))
const dialogs: string[] = []
page.on('dialog', (d) => {
  dialogs.push(d.message())
  void d.accept()
})

async function useToken(token: string): Promise<void> {
  await page.fill('#token', token)
  await page.press('#token', 'Enter')
}

t.test('run on a picked coordinator, parked at the approval, approved, ended', async (t) => {
  await page.goto(tp.url + '/platform/admin/workflow.html')
  await useToken(EDITOR)
  const pick = page.locator('#wf-coordinator')
  await pick.locator('option[value="ops"]').waitFor({ state: 'attached' })
  t.same(await pick.locator('option').allTextContents(), ['ops (the only one)', 'ops (4/4 agents)'])
  await pick.selectOption('ops')
  await page.locator('#wf-list').getByRole('button', { name: 'Incident', exact: true }).click()
  await page.waitForFunction(() =>
    (document.querySelector('#wf-json') as HTMLTextAreaElement).value.includes('"incident"')
  )
  await page.fill('#wf-input', 'fire in the lab')
  await page.getByRole('button', { name: 'Run the saved workflow' }).click()

  const result = page.locator('#wf-run-result')
  await result.getByText('WAITING_APPROVAL').first().waitFor()
  t.match(
    await result.locator('p[role=status]').textContent(),
    /of incident on ops: WAITING_APPROVAL at signoff: Page the on-call\?/
  )
  t.equal(await result.locator('tbody tr').count(), 7, 'a row per node that ran')
  t.match(await result.locator('tr', { hasText: 'merge' }).textContent(), /research: three facts \| draft of/)
  const row = page.locator('#wf-approvals tr', { hasText: 'signoff' })
  t.match(await row.textContent(), /incident.*signoff.*Page the on-call\?/)
  await page.screenshot({ path: SHOTS + 'workflow-run-waiting-1280.png', fullPage: true })

  await row.getByRole('button', { name: 'Approve' }).click()
  const refused = page.locator('#wf-approvals p.error')
  await refused.waitFor()
  t.match(await refused.textContent(), /authorizer does not allow it this action\. \(PLT_ERR_ADMIN_FORBIDDEN\)/)
  t.equal(await page.locator('#wf-approvals tr', { hasText: 'signoff' }).count(), 1, 'still pending')

  await useToken(APPROVER)
  await page.locator('#wf-approvals tr', { hasText: 'signoff' }).getByRole('button', { name: 'Approve' }).click()
  await result.locator('p[role=status]', { hasText: 'SUCCEEDED' }).waitFor()
  t.match(await result.textContent(), /Output: research: three facts \| draft of \d+ chars/)
  t.equal(await result.locator('tbody tr').count(), 9)
  t.match(await result.locator('tr', { hasText: 'routine' }).textContent(), /SKIPPED.*all upstream branches pruned/)
  await page.locator('#wf-approvals').getByText('No approvals pending').waitFor()
  await page.locator('#wf-runs tr', { hasText: 'SUCCEEDED' }).waitFor()
  t.same(dialogs, ['Approve signoff of incident?', 'Approve signoff of incident?'])
  await page.screenshot({ path: SHOTS + 'workflow-run-done-1280.png', fullPage: true })
  t.same(pageErrors, [])
})

t.test('a denial from the page: the run fails, what follows is pruned', async (t) => {
  await useToken(EDITOR)
  await page.fill('#wf-input', 'flood in the basement')
  await page.getByRole('button', { name: 'Run the saved workflow' }).click()
  const result = page.locator('#wf-run-result')
  await result.getByText('WAITING_APPROVAL').first().waitFor()
  await useToken(APPROVER)
  await page.locator('#wf-approvals tr', { hasText: 'signoff' }).getByRole('button', { name: 'Deny' }).click()
  await result.locator('p[role=status]', { hasText: 'FAILED' }).waitFor()
  t.match(await result.locator('tr', { hasText: 'signoff' }).textContent(), /FAILED.*approval denied/)
  t.match(await result.locator('tr', { hasText: 'out' }).last().textContent(), /SKIPPED/)
  t.equal(await page.locator('#wf-runs tbody tr').count(), 2, 'both runs listed')
  t.same(pageErrors, [])
})
