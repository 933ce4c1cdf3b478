// How fast the dashboard paints on a platform with 1 000 agents (one plugin, registered as any
// plugin is) and 10 000 coordination journal events (appended to the fleet area's own journal
// store, the one the admin routes read). Each first view is loaded in a fresh page with the
// token in the URL, as the first start prints it: the overview, the Agents tab and the Journal
// tab. The figures go to the test's output; only that each view rendered is asserted.
import t from 'tap'
import { availableParallelism, loadavg } from 'node:os'
import type { Page } from 'playwright-core'
import { definePlugin, agent } from 'uws-agent-platform/sdk'
import { launchChromium, SHOTS } from '../helpers/browser.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import { type Manifest } from '../../runtime/plugins/index.js'
import { FLEET } from '../../runtime/fleet/key.js'
import { type JournalRecord } from '../../runtime/fleet/fleet-types.js'
import { adminPlatform, ALICE, TOKENS } from './helpers.js'

const AGENTS = 1000
const EVENTS = 10_000

const tp = await adminPlatform({ 'platform.auth.tokens': TOKENS })
t.teardown(tp.close)

const manifest: Manifest = {
  name: 'many-agents',
  version: '1.0.0',
  entry: 'index.js',
  sandbox: 'inline',
  permissions: { net: [], kv: false, env: [] },
  limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 1 }
}
const plugin = definePlugin({
  agents: Array.from({ length: AGENTS }, (_, i) =>
    agent({ name: `agent-${i}`, description: `agent number ${i}`, version: '1.0.0', systemPrompt: 'Be brief.' })
  )
})
tp.platform.plugins.set('/plugins/many', manifest, inlineInstance(plugin, { log: tp.platform.logger }))

// 2 500 coordinations of four events each (start, dispatch, completion, end), a second apart
const journal = tp.platform.area(FLEET).journal
const base = Date.parse('2026-11-20T00:00:00.000Z')
const batch: JournalRecord[] = []
for (let i = 0; i < EVENTS; i++) {
  const c = Math.floor(i / 4)
  const step = i % 4
  const type = (['CoordinationStarted', 'AgentDispatched', 'AgentCompleted', 'CoordinationCompleted'] as const)[step]
  batch.push({
    eventId: `ev-${i}`,
    parentEventId: step === 0 ? null : `ev-${i - step}`,
    type,
    coordinationId: `coord-${c}`,
    timestamp: new Date(base + i * 1000).toISOString(),
    ...(step === 1 || step === 2 ? { agentName: `agent-${c % AGENTS}`, skill: 'chat' } : {})
  })
}
await journal.append(batch)

const browser = await launchChromium()

/** What the probe keeps in the page: per condition, when it first held and when its frame was drawn. */
interface Probe {
  longest: number
  inDom: number[]
  drawn: number[]
}

// Runs in the page before its own scripts. The moment each of `rendered` first holds (checked on
// every DOM change), and when the main thread is done with the frame that shows it: the first of a
// timer set in that frame's animation callback (it runs after the frame's style, layout and paint)
// and the next frame's callback (a loaded renderer may start that frame before the timer). Measured
// in the page, the figures leave out the test's own round trips (navigation, injecting
// Playwright's script): polled from the test, they had counted 300 ms and more of those.
function probe(rendered: (() => boolean)[]): void {
  const w = window as unknown as Probe
  w.longest = 0
  w.inDom = []
  w.drawn = []
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) w.longest = Math.max(w.longest, e.duration)
  }).observe({ type: 'longtask', buffered: true })
  new MutationObserver((_, observer) => {
    rendered.forEach((holds, i) => {
      if (w.inDom[i] !== undefined || !holds()) return
      w.inDom[i] = performance.now()
      // inline callbacks only: a named one would be wrapped by the test's transpiler in a helper
      // that does not exist in the page
      requestAnimationFrame(() => {
        setTimeout(() => (w.drawn[i] ??= performance.now()))
        requestAnimationFrame(() => (w.drawn[i] ??= performance.now()))
      })
    })
    if (w.inDom.filter((x) => x !== undefined).length === rendered.length) observer.disconnect()
  }).observe(document, { childList: true, subtree: true })
}

/**
 * Opens `hash` in a fresh page signed in (by the URL for the overview), and resolves once each of
 * `rendered` (expressions) has held in the page and been drawn: the milliseconds from navigation
 * start to the first contentful paint, to each holding and to its frame drawn, and the longest
 * main-thread task until then (the Performance API's `longtask`).
 */
async function firstView(
  hash: string,
  rendered: string[]
): Promise<{ page: Page; fcp: number; inDom: number[]; drawn: number[]; longest: number }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  t.teardown(() => context.close())
  const page = await context.newPage()
  page.setDefaultTimeout(60_000)
  // the probe as a script's text, not an evaluated string: the page's CSP forbids eval
  await page.addInitScript({ content: `(${probe.toString()})([${rendered.map((r) => `() => ${r}`).join(', ')}])` })
  if (hash === '') await page.goto(`${tp.url}/platform/admin/#token=${ALICE}`)
  else {
    // the URL's fragment names the tab here: the token is the one an earlier visit kept in the session
    await page.addInitScript((token) => sessionStorage.setItem('platform.admin.token', token), ALICE)
    await page.goto(`${tp.url}/platform/admin/${hash}`)
  }
  // a function, evaluated once (a string is evaluated again at each poll, which the CSP refuses)
  await page.waitForFunction(
    (n) => (window as unknown as Probe).drawn.filter((x) => x !== undefined).length === n,
    rendered.length,
    { polling: 50 }
  )
  const [fcp, inDom, drawn, longest] = await page.evaluate(() => {
    const w = window as unknown as Probe
    return [
      performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1,
      w.inDom,
      w.drawn,
      w.longest
    ] as const
  })
  await page.screenshot({ path: `${SHOTS}first-paint${hash === '' ? '' : '-' + hash.slice(1)}.png` })
  return {
    page,
    fcp: Math.round(fcp),
    inDom: inDom.map(Math.round),
    drawn: drawn.map(Math.round),
    longest: Math.round(longest)
  }
}

// the figures depend on the machine's load, said with them
const load = (): string => `load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`

t.test('the overview with 1 000 agents and 10 000 journal events', async (t) => {
  const r = await firstView('', [
    `document.querySelector('[data-counter=agentCount]')?.textContent === '${AGENTS}' && document.querySelectorAll('#panel-overview figure[data-chart]').length === 5`
  ])
  t.comment(
    `overview: first contentful paint ${r.fcp} ms, counters and charts in the DOM at ${r.inDom[0]} ms and drawn at ${r.drawn[0]} ms, longest task ${r.longest} ms (${load()})`
  )
  t.ok(r.fcp >= 0, 'painted')
})

t.test('the Agents tab as the first view draws 200 agents, then all on request', async (t) => {
  // the agents table, in the tab's first section: another section's table may be drawn before it
  const rows = `document.querySelector('#panel-agents > :first-child table')?.tBodies[0]?.rows.length`
  const r = await firstView('#agents', [
    `${rows} > 0`,
    `${rows} === 200 && document.querySelector('#panel-agents button.more') !== null`
  ])
  t.comment(
    `agents (${AGENTS}): first contentful paint ${r.fcp} ms, the table's first rows in the DOM at ${r.inDom[0]} ms and drawn at ${r.drawn[0]} ms, 200 rows drawn at ${r.drawn[1]} ms, longest task ${r.longest} ms (${load()})`
  )
  const all = await r.page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const start = performance.now()
        const body = document.querySelector<HTMLTableElement>('#panel-agents table')!.tBodies[0]!
        new MutationObserver((_, o) => {
          if (body.rows.length < 1000) return
          o.disconnect()
          resolve(performance.now() - start)
        }).observe(body, { childList: true })
        document.querySelector<HTMLButtonElement>('#panel-agents button.more')!.click()
      })
  )
  t.comment(`agents: every row drawn ${Math.round(all)} ms after "Show all"`)
  t.equal(await r.page.locator('#panel-agents table').first().locator('tbody tr').count(), AGENTS, 'every agent')
})

t.test('the Journal tab as the first view shows the newest events', async (t) => {
  const r = await firstView('#journal', [`document.querySelectorAll('#panel-journal tbody tr').length === 200`])
  t.comment(
    `journal (${EVENTS} events, newest 200 drawn): first contentful paint ${r.fcp} ms, rows in the DOM at ${r.inDom[0]} ms and drawn at ${r.drawn[0]} ms, longest task ${r.longest} ms (${load()})`
  )
  t.ok(r.fcp >= 0, 'painted')
})
