// The dashboard in a real browser (Debian's chromium through playwright-core) against a real
// platform: every tab with live data, the feed, broadcast and disconnect reaching a WebSocket
// client, the kill switch, the workflow editor, the evals page, an agent named like markup, and
// a burst of 10 000 events. Screenshots go to test-artifacts/dashboard/ (git-ignored).
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { launchChromium, SHOTS } from '../helpers/browser.js'
import { definePlugin, agent } from 'uws-agent-platform/sdk'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import { type Manifest } from '../../runtime/plugins/index.js'
import { EMPTY_FLEET } from '../../runtime/admin/fleet-view.js'
import { MemoryJournalStore } from '../../runtime/fleet/memory-journal-store.js'
import { type JournalRecord } from '../../runtime/fleet/fleet-types.js'
import { adminPlatformSwappingFleet, call, ALICE, BOB, WRITER } from './helpers.js'
import { wsMember } from '../transport/clients.js'

const XSS = '<img src=x onerror=alert(1)>'

const tp = await adminPlatformSwappingFleet({
  ...WRITER,
  'platform.ai.governance.kill-switch.enabled': true,
  'platform.interactions.http-write-enabled': true
})
t.teardown(tp.close)

const manifest: Manifest = {
  name: 'markup-agent',
  version: '0.0.1',
  entry: 'index.js',
  sandbox: 'inline',
  permissions: { net: [], kv: false, env: [] },
  limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 1 }
}
const plugin = definePlugin({
  agents: [
    agent({ name: XSS, description: XSS, version: '6.6.6', endpoint: '/markup', systemPrompt: 'x' }),
    agent({ name: 'lead', fleet: [XSS], run: () => 'ok' })
  ]
})
tp.platform.plugins.set('/plugins/markup', manifest, inlineInstance(plugin, { log: tp.platform.logger }))

const browser: Browser = await launchChromium()
const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
const page: Page = await context.newPage()
page.setDefaultTimeout(8000)
const dialogs: string[] = []
const pageErrors: string[] = []
page.on('pageerror', (e) => pageErrors.push(String(e)))
// a CSP violation is only a console message: collect them so the policy is known to fit the pages
const cspViolations: string[] = []
page.on('console', (m) => {
  if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text())
})
// what the pages load by themselves (documents, scripts, styles, icons) is never missing; the
// browser's own favicon request included. API calls (fetch) may 404 on purpose
const missing: string[] = []
page.on('response', (r) => {
  if (r.status() === 404 && !['fetch', 'xhr', 'websocket'].includes(r.request().resourceType())) missing.push(r.url())
})
// confirmations are accepted; an alert would mean markup from the server ran
page.on('dialog', (d) => {
  dialogs.push(`${d.type()}: ${d.message()}`)
  void d.accept()
})

/** Opens a tab and waits for its fresh render (a form from the last visit would be replaced under us). */
async function tab(name: string): Promise<void> {
  const button = page.getByRole('tab', { name })
  await button.click()
  const panel = await button.getAttribute('aria-controls')
  await page.locator(`#${panel}:not([aria-busy=true])`).waitFor()
}

await page.goto(tp.url + '/platform/admin/')
await page.fill('#token', ALICE)
await page.press('#token', 'Enter')
await page.locator('#stream-state.live').waitFor()

t.test('overview counters and every tab render real data; 401 is explained without a token', async (t) => {
  await page.locator('[data-counter=status]', { hasText: 'UP' }).waitFor()
  t.equal(await page.textContent('[data-counter=aiRuntime]'), 'demo')
  await tab('Agents')
  const agents = page.locator('#panel-agents')
  // each section is drawn as its data comes: wait for the last of them
  await page.locator('#panel-agents:not([aria-busy=true])').waitFor()
  await agents.getByText('6.6.6').waitFor()
  // a coordinator is badged, its fleet in the tooltip
  const lead = agents.locator('td span[title]', { hasText: 'lead' }).first()
  t.equal(await lead.getAttribute('title'), `fleet: ${XSS}`)
  t.equal(await lead.locator('.badge', { hasText: 'coordinator' }).count(), 1)
  t.ok(await agents.getByText('demo', { exact: true }).first().isVisible(), 'the demo runtime')
  await tab('Broadcasters')
  await page.locator('#panel-connections').getByText('No broadcasters').waitFor()
  await tab('Journal')
  await page.locator('#panel-journal').getByText('The journal is empty').waitFor()
  const made = await fetch(tp.url + '/api/interactions', {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'Hello from the dashboard test' })
  })
  t.equal(made.status, 200, 'an interaction to show')
  const interaction = (await made.json()) as { id: string; steps: unknown[] }
  await tab('Interactions')
  const inter = page.locator('#panel-interactions')
  await inter.getByRole('button', { name: interaction.id }).click()
  // the timeline replays the stored steps over the live stream, then its terminal status
  await inter
    .locator('.timeline li')
    .nth(interaction.steps.length - 1)
    .waitFor()
  t.equal(await inter.locator('.timeline li').count(), interaction.steps.length)
  await inter.locator('.timeline li', { hasText: 'Hello from the dashboard test' }).first().waitFor()
  await inter.locator('p .badge', { hasText: 'COMPLETED' }).waitFor()
  await page.screenshot({ path: SHOTS + 'interactions-1280.png' })
  await tab('Governance')
  await page.locator('#panel-governance').getByText('ASI01', { exact: true }).waitFor()
  await page.locator('#panel-governance').getByText('kill-switch').first().waitFor()
  await tab('Audit')
  await page.locator('#panel-audit h2', { hasText: 'Control audit log' }).waitFor()
  await page.screenshot({ path: SHOTS + 'audit-1280.png' })

  // the same page without a token: the content read is refused, and the page says why
  const anon = await context.newPage()
  await anon.goto(tp.url + '/admin/#audit')
  const err = anon.locator('#panel-audit .error')
  await err.waitFor()
  t.match(await err.textContent(), /No token: .*token field.*\(PLT_ERR_ADMIN_CONTENT_READ_AUTH_REQUIRED\)/)
  await anon.close()
})

t.test('overview counters follow the event stream without a reload; tabs work from the keyboard', async (t) => {
  await tab('Overview')
  const connections = page.locator('[data-counter=connections]')
  const before = Number(await connections.textContent())
  const requests: string[] = []
  const watch = (r: { url: () => string }) => requests.push(r.url())
  page.on('request', watch)
  const m = await wsMember(tp.url, 'counter-room')
  await page.locator('[data-counter=connections]', { hasText: String(before + 1) }).waitFor()
  m.ws.close()
  await page.locator('[data-counter=connections]', { hasText: String(before) }).waitFor()
  page.off('request', watch)
  // the charts redraw from their own read a second after a chart event (a join is one): not the counters
  const reads = requests.filter((u) => !u.endsWith('/api/admin/metrics/history'))
  t.same(reads, [], 'counted from events, no REST call')
  await page.screenshot({ path: SHOTS + 'overview-1280.png' })
  await page.getByRole('tab', { name: 'Overview' }).focus()
  await page.keyboard.press('ArrowRight')
  t.equal(await page.getByRole('tab', { name: 'Live feed' }).getAttribute('aria-selected'), 'true')
  t.equal(await page.evaluate(() => document.activeElement?.id), 'tab-feed')
  await page.keyboard.press('ArrowLeft')
  t.equal(await page.getByRole('tab', { name: 'Overview' }).getAttribute('aria-selected'), 'true')
})

t.test('an agent named like markup renders as text, inert', async (t) => {
  await tab('Agents')
  const cell = page.locator('#panel-agents td', { hasText: XSS }).first()
  await cell.waitFor()
  t.equal(await cell.textContent(), XSS)
  t.equal(await page.locator('#panel-agents img').count(), 0, 'no element was parsed from the name')
  t.same(
    dialogs.filter((d) => d.startsWith('alert')),
    []
  )
})

let member: Awaited<ReturnType<typeof wsMember>>
t.test('the live feed shows a room join within a second', async (t) => {
  await tab('Live feed')
  const started = Date.now()
  member = await wsMember(tp.url, 'ops')
  const row = page.locator('#panel-feed tr[data-type=ResourceConnected]', { hasText: member.uuid })
  await row.waitFor({ timeout: 1000 })
  t.pass(`row shown ${Date.now() - started} ms after the join began`)
  t.equal(await row.getAttribute('class'), 'new', 'the newest rows are highlighted')
  // paused rows are held back and counted, then shown on resume
  await page.getByRole('button', { name: 'Pause' }).click()
  const second = await wsMember(tp.url, 'ops')
  await page.getByText(/^\d+ new while paused$/).waitFor()
  t.equal(await page.locator('#panel-feed tr', { hasText: second.uuid }).count(), 0)
  await page.getByRole('button', { name: 'Resume' }).click()
  await page.locator('#panel-feed tr', { hasText: second.uuid }).first().waitFor()
  second.ws.close()
  await second.closed
  await page.locator('#panel-feed select').selectOption('ResourceConnected')
  t.equal(await page.locator('#panel-feed tbody tr:visible[data-type=ResourceDisconnected]').count(), 0, 'filter')
  await page.locator('#panel-feed select').selectOption('')
  await page.screenshot({ path: SHOTS + 'feed-1280.png' })
})

t.test('broadcast and disconnect from the page reach a real WebSocket client', async (t) => {
  await tab('Broadcasters')
  const panel = page.locator('#panel-connections')
  await panel.getByText('/platform/rooms/ops').first().waitFor()
  await panel.getByLabel('Message for /platform/rooms/ops').fill('hello from the dashboard')
  await panel.getByRole('button', { name: 'Broadcast' }).click()
  const got = await member.inbox.next((f) => JSON.stringify(f).includes('hello from the dashboard'), 3000)
  t.ok(got, 'the member got the broadcast')
  t.ok(
    dialogs.some((d) => d.startsWith('confirm: Broadcast')),
    'asked first'
  )
  await page.screenshot({ path: SHOTS + 'broadcasters-1280.png' })
  const row = panel.locator('tr', { hasText: member.uuid })
  await row.getByRole('button', { name: 'Disconnect' }).click()
  const closed = await member.closed
  t.ok(closed.code >= 1000, `closed with ${closed.code}`)
  await panel
    .getByText('No connected clients.')
    .waitFor()
    .catch(async (err: Error) => {
      throw new Error(err.message + '\n' + (await panel.textContent()))
    })
})

t.test('kill switch: arm with a reason, disarm, both confirmed and real', async (t) => {
  await tab('Governance')
  const panel = page.locator('#panel-governance')
  await panel.getByLabel('Reason').fill('incident 42 from the dashboard')
  await panel.getByRole('button', { name: 'Arm' }).click()
  await panel
    .getByText('ARMED', { exact: true })
    .waitFor()
    .catch(async (err: Error) => {
      throw new Error(err.message + '\n' + (await panel.textContent())?.slice(0, 600))
    })
  let health = await call(tp, 'GET', '/governance/health', { token: ALICE })
  t.equal(health.body.killSwitch.armed, true)
  t.equal(health.body.killSwitch.reason, 'incident 42 from the dashboard')
  await page.screenshot({ path: SHOTS + 'governance-1280.png', fullPage: false })
  await panel.getByRole('button', { name: 'Disarm' }).click()
  await panel.getByText('disarmed', { exact: true }).waitFor()
  health = await call(tp, 'GET', '/governance/health')
  t.equal(health.body.killSwitch.armed, false)
  await tab('Audit')
  await page.locator('#panel-audit td', { hasText: 'governance.kill_switch.arm' }).first().waitFor()
})

t.test('a token without the role: the refused write is explained as 403, nothing changes', async (t) => {
  const other = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  const p = await other.newPage()
  p.on('dialog', (d) => void d.accept())
  await p.goto(tp.url + '/platform/admin/#governance')
  await p.fill('#token', BOB)
  await p.press('#token', 'Enter')
  const panel = p.locator('#panel-governance')
  await panel.locator(':scope:not([aria-busy=true])').waitFor()
  await panel.getByLabel('Reason').fill('not allowed')
  // an event that redraws the tab while the operator types (here forced) keeps what was typed
  await p.evaluate(() => document.dispatchEvent(new Event('console-refresh')))
  await panel.locator(':scope:not([aria-busy=true])').waitFor()
  t.equal(await panel.getByLabel('Reason').inputValue(), 'not allowed', 'a redraw keeps the reason')
  await panel.getByRole('button', { name: 'Arm' }).click()
  const err = panel.locator('.error', { hasText: 'lacks the role' })
  await err.waitFor()
  t.match(await err.textContent(), /Your token is valid but lacks the role .*\(PLT_ERR_ADMIN_ROLE_REQUIRED\)/)
  // the refusal is an event too, and an event redraws the tab: the message must outlive the redraw,
  // and two redraws asked for at once (they run one after the other)
  await p.evaluate(() => {
    document.dispatchEvent(new Event('console-refresh'))
    document.dispatchEvent(new Event('console-refresh'))
  })
  // and while the redraw waits for its data (an event may start one at any time)
  t.equal(await panel.locator('.error', { hasText: 'lacks the role' }).count(), 1, 'shown while the tab redraws')
  await panel.locator(':scope:not([aria-busy=true])').waitFor()
  t.equal(await panel.locator('.error', { hasText: 'lacks the role' }).count(), 1, 'still shown after a redraw')
  t.equal((await call(tp, 'GET', '/governance/health')).body.killSwitch.armed, false)
  await other.close()
})

t.test('with no animation frames (a hidden tab) events still arrive, by the fallback timer', async (t) => {
  const hidden = await browser.newContext()
  // a background tab's requestAnimationFrame never fires: model it by one that never calls back
  await hidden.addInitScript((token) => {
    window.requestAnimationFrame = () => 0
    sessionStorage.setItem('platform.admin.token', token)
  }, ALICE)
  const p = await hidden.newPage()
  await p.goto(tp.url + '/platform/admin/#feed')
  await p.locator('#stream-state.live').waitFor()
  const m = await wsMember(tp.url, 'hidden-room')
  await p.locator('#panel-feed tr[data-type=ResourceConnected]', { hasText: m.uuid }).waitFor({ timeout: 3000 })
  t.pass('flushed without a frame')
  m.ws.close()
  await hidden.close()
})

t.test('the small screen: 375 px wide, dark', async (t) => {
  const small = await browser.newContext({ viewport: { width: 375, height: 760 }, colorScheme: 'dark' })
  const p = await small.newPage()
  await p.goto(tp.url + '/platform/admin/#agents')
  await p.locator('#panel-agents td', { hasText: '6.6.6' }).waitFor()
  // without a token the event stream is refused, and the header says why
  await p.locator('#stream-state', { hasText: 'refused: the event stream needs a token' }).waitFor()
  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
  t.ok(overflow <= 0, `the page does not scroll sideways (${overflow} px)`)
  await p.screenshot({ path: SHOTS + 'agents-375-dark.png', fullPage: true })
  await small.close()
})

t.test('workflow editor: create, edit, 409 with the stored version, invalid JSON, delete', async (t) => {
  await page.goto(tp.url + '/platform/admin/workflow.html')
  const messages = page.locator('#wf-messages')
  await page.locator('#wf-graph svg').waitFor()
  t.equal(await page.locator('#wf-graph svg g.node').count(), 3, 'the template drawn as a graph')
  await page.click('#wf-save')
  await messages
    .getByText('Saved my-workflow at version 1.')
    .waitFor()
    .catch(async (err: Error) => {
      throw new Error(err.message + '\n' + (await messages.textContent()))
    })
  const stale = await page.inputValue('#wf-json')
  const edited = JSON.parse(stale)
  edited.name = 'Renamed workflow'
  await page.fill('#wf-json', JSON.stringify(edited))
  await page.click('#wf-save')
  await messages.getByText('Saved my-workflow at version 2.').waitFor()
  await page.locator('#wf-list').getByText('Renamed workflow').waitFor()
  // a second editor saving from version 1 again
  await page.fill('#wf-json', stale)
  await page.click('#wf-save')
  await messages.getByText('the stored version is 2').waitFor()
  await page.screenshot({ path: SHOTS + 'workflow-409-1280.png' })
  await page.getByRole('button', { name: 'Load stored version 2' }).click()
  await page.waitForFunction(() =>
    (document.querySelector('#wf-json') as HTMLTextAreaElement).value.includes('"version": 2')
  )
  t.equal(JSON.parse(await page.inputValue('#wf-json')).name, 'Renamed workflow', 'the stored version is in the editor')
  await page.fill('#wf-json', '{"id": "x",')
  await messages.getByText(/Not valid JSON/).waitFor()
  await page.fill(
    '#wf-json',
    '{"id":"bad id","name":"n","nodes":[{"id":"a","type":"agent"}],"edges":[{"from":"a","to":"zz"}]}'
  )
  await messages.getByText("edges[0].to 'zz' is not a node").waitFor()
  await page.locator('#wf-list').getByRole('button', { name: 'Renamed workflow' }).click()
  // delete acts on what the editor holds: wait until the opened manifest is in it
  await page.waitForFunction(() =>
    (document.querySelector('#wf-json') as HTMLTextAreaElement).value.includes('"my-workflow"')
  )
  await page.click('#wf-delete')
  await messages.getByText('Deleted my-workflow.').waitFor()
  t.equal((await call(tp, 'GET', '/workflow/my-workflow')).status, 404)
})

t.test('fleet data fed through the admin fleet view: the journal graph', async (t) => {
  // a real journal store behind the view: the graph is drawn from the tree the route builds
  // (workflow runs have their own browser test, workflow-run-browser.test.ts)
  const at = (s: number) => `2026-11-24T10:00:0${s}.000Z`
  const events: JournalRecord[] = [
    { type: 'CoordinationStarted', coordinationId: 'c-7', timestamp: at(0), eventId: 'e0', parentEventId: null },
    {
      type: 'AgentDispatched',
      coordinationId: 'c-7',
      timestamp: at(1),
      eventId: 'e1',
      parentEventId: 'e0',
      agentName: 'research'
    },
    {
      type: 'AgentDispatched',
      coordinationId: 'c-7',
      timestamp: at(2),
      eventId: 'e2',
      parentEventId: 'e0',
      agentName: 'writer'
    },
    {
      type: 'AgentFailed',
      coordinationId: 'c-7',
      timestamp: at(3),
      eventId: 'e3',
      parentEventId: 'e2',
      agentName: 'writer'
    },
    {
      type: 'AgentCompleted',
      coordinationId: 'c-7',
      timestamp: at(4),
      eventId: 'e4',
      parentEventId: 'e1',
      agentName: 'research'
    }
  ]
  const store = new MemoryJournalStore()
  await store.append(events)
  tp.fleet({
    ...EMPTY_FLEET,
    coordinators: () => [{ name: 'ops', agentCount: 2, availableCount: 2 }],
    journal: (q) => store.query(q),
    coordination: (id) => store.coordination(id),
    coordinatorCount: 1
  })
  t.teardown(() => tp.fleet(undefined))

  await page.goto(tp.url + '/platform/admin/#journal')
  const journal = page.locator('#panel-journal')
  await journal.getByLabel('Agent').fill('writer')
  await journal.getByRole('button', { name: 'Filter' }).click()
  await journal.locator('tbody tr').nth(2).waitFor({ state: 'detached' })
  t.equal(await journal.locator('tbody tr').count(), 2, 'filtered by agent')
  await journal.getByRole('button', { name: 'c-7' }).first().click()
  await journal.locator('svg.graph').waitFor()
  t.equal(await journal.locator('svg.graph g.node').count(), 5)
  t.equal(await journal.locator('svg.graph path.edge').count(), 4)
  t.equal(await journal.locator('svg.graph g.node.failed').count(), 1, 'the failure stands out')
  // the graph opens at the top of the view, above the rows it was picked from
  const top = await journal.locator('.graph-box').evaluate((b) => b.getBoundingClientRect().top)
  const rows = await journal.locator('table').evaluate((b) => b.getBoundingClientRect().top)
  const height = await page.evaluate(() => innerHeight)
  t.ok(top >= 0 && top < height / 2, `the graph is in the top half of the view (${top} px)`)
  t.ok(top < rows, 'above the table')
  await page.screenshot({ path: SHOTS + 'journal-graph-1280.png' })
})

t.test('evals: pass rate per baseline with a trend, runs with the raw judge response', async (t) => {
  const runs = [
    {
      id: 'r1',
      baseline: 'support',
      passed: true,
      judgeModel: 'judge-9',
      agentVersion: '1.0.0',
      judgeResponse: 'PASS: polite'
    },
    {
      id: 'r2',
      baseline: 'support',
      passed: false,
      judgeModel: 'judge-9',
      agentVersion: '1.0.1',
      judgeResponse: 'FAIL: rude'
    },
    { id: 'r3', baseline: 'billing', passed: true, judgeModel: 'judge-9', agentVersion: '1.0.1', judgeResponse: 'PASS' }
  ]
  for (const [i, r] of runs.entries())
    t.equal(
      (
        await call(tp, 'POST', '/evals/runs', {
          token: ALICE,
          body: { ...r, timestamp: `2026-11-0${i + 1}T10:00:00Z` }
        })
      ).status,
      200
    )
  await page.goto(tp.url + '/platform/admin/evals.html')
  const support = page.locator('#baselines tr', { hasText: 'support' })
  await support.waitFor()
  t.match(await support.textContent(), /50%.*1\/2/)
  t.equal(await support.locator('svg.trend rect').count(), 2)
  const r2 = page.locator('#runs tr', { hasText: 'FAIL: rude' })
  t.notOk(await r2.getByText('FAIL: rude').isVisible(), 'collapsed')
  await r2.locator('summary').click()
  t.ok(await r2.getByText('FAIL: rude').isVisible(), 'expanded')
  t.match(await r2.textContent(), /judge-9.*1\.0\.1/)
  await page.screenshot({ path: SHOTS + 'evals-1280.png' })
})

t.test('the journal graph draws a coordination tree as SVG (fed the tree shape; no fleet yet)', async (t) => {
  const drawn = await page.evaluate(async () => {
    // the dashboard's own module, resolved by the browser against the page's URL
    const url = './js/graph.js'
    const { graph, journalGraph } = (await import(url)) as {
      graph(nodes: unknown, edges: unknown, title: string): SVGSVGElement
      journalGraph(events: object[]): { nodes: unknown; edges: unknown }
    }
    const { nodes, edges } = journalGraph([
      { eventId: 'e0', type: 'CoordinationStarted' },
      { eventId: 'e1', parentEventId: 'e0', type: 'AgentDispatched', agentName: '<b>x</b>' },
      { eventId: 'e2', parentEventId: 'e1', type: 'AgentFailed', agentName: 'w' }
    ])
    const svg = graph(nodes, edges, 'c-1')
    document.body.append(svg)
    const out = {
      nodes: svg.querySelectorAll('g.node').length,
      edges: svg.querySelectorAll('path.edge').length,
      failed: svg.querySelectorAll('g.node.failed').length,
      markup: svg.querySelectorAll('b').length,
      label: svg.querySelectorAll('g.node title')[1]?.textContent
    }
    svg.remove()
    return out
  })
  t.same(drawn, { nodes: 3, edges: 2, failed: 1, markup: 0, label: 'AgentDispatched · <b>x</b>' })
})

t.test('a burst of 10 000 events: measured, and the feed keeps the last 500', async (t) => {
  await page.goto(tp.url + '/platform/admin/#feed')
  await page.locator('#stream-state.live').waitFor()
  await page.evaluate(() => {
    const w = window as unknown as { longest: number }
    w.longest = 0
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.longest = Math.max(w.longest, e.duration)
    }).observe({ type: 'longtask' })
  })
  for (let i = 0; i < 10_000; i++)
    tp.platform.bus.emit('MessageBroadcast', { broadcasterId: `/platform/rooms/burst-${i}`, resourceCount: i })
  await page.locator('#panel-feed tr', { hasText: 'burst-9999' }).waitFor({ timeout: 15_000 })
  const longest = await page.evaluate(() => (window as unknown as { longest: number }).longest)
  t.comment(`burst of 10000 events: longest task ${longest.toFixed(0)} ms`)
  t.equal(await page.locator('#panel-feed tbody tr').count(), 500)
  t.same(pageErrors, [], 'no uncaught page errors all along')
  t.same(cspViolations, [], 'nothing the pages do is refused by their CSP')
  t.same(missing, [], 'nothing the pages load by themselves is a 404, the favicon included')
})
