// Hostile clients flushing the logs: anonymous callers denied by the write gate, and anonymous
// agent turns, cannot push an operator's audit entry or an authenticated turn's decisions out of
// reach. Their denials are counted (headers and /metrics) and sampled; both listings page by
// cursor through everything retained. The sampling keeps 1 a second, so however fast this
// machine sends the flood, most of it is dropped.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startDemoPlatform } from './demo-platform.js'
import { postTurn } from '../ai/agent-clients.js'

const dir = mkdtempSync(join(tmpdir(), 'log-flooding-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const policies = join(dir, 'policies.yaml')
writeFileSync(
  policies,
  `version: "2"
policies:
  - {name: no-spam, type: deny-list, config: {phrases: [spam]}}
`
)
const TOKEN = 'log-flood-operator-token-0123456789'
const tp = await startDemoPlatform({
  'platform.data-dir': join(dir, 'data'),
  'platform.admin.http-write-enabled': true,
  'platform.ai.governance.kill-switch.enabled': true,
  'platform.ai.governance.policy-files': [policies],
  'platform.admin.audit-anonymous-per-second': 1,
  'platform.ai.governance.decision-log.anonymous-denied-per-second': 1,
  // a small ring and retention, so that a flood would evict the real entries if it could
  'platform.ai.governance.decision-log.capacity': 100,
  'platform.ai.governance.decision-log.retention': 1000,
  'platform.auth.tokens': [{ token: TOKEN, principal: 'ops', roles: ['admin'] }]
})
t.teardown(tp.close)
const auth = { authorization: `Bearer ${TOKEN}` }

/** Runs `fn(0..n-1)`, `width` at a time: a bounded load on loopback. */
async function flood(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < n) await fn(next++)
  }
  await Promise.all(Array.from({ length: width }, worker))
}

interface Answer {
  status: number
  body: any
  headers: Headers
}
async function get(path: string): Promise<Answer> {
  const r = await fetch(tp.url + path, { headers: auth })
  return { status: r.status, body: await r.json(), headers: r.headers }
}

/** Every entry a listing holds, page by page along X-Next-Cursor, and the pages' count. */
async function walk(path: string, limit: number): Promise<{ entries: any[][]; pages: number }> {
  const pages: any[][] = []
  let url = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}`
  for (;;) {
    const r = await get(url)
    t.equal(r.status, 200, url)
    pages.push(r.body)
    const next = r.headers.get('x-next-cursor')
    if (next === null) return { entries: pages, pages: pages.length }
    t.ok(r.body.length === limit, 'only a full page has a next one')
    // the Link header names the same next page
    t.match(r.headers.get('link'), new RegExp(`cursor=${next}`))
    url = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}&cursor=${next}`
  }
}

async function metric(log: string, outcome: string): Promise<number> {
  const text = await (await fetch(tp.url + '/metrics')).text()
  const m = new RegExp(`^platform_log_anonymous_denied_total\\{log="${log}",outcome="${outcome}"\\} (\\d+)$`, 'm').exec(
    text
  )
  return m === null ? 0 : Number(m[1])
}

t.test("1 500 anonymous denied arms leave the operator's entries readable", async (t) => {
  const arm = (headers: Record<string, string>) =>
    fetch(`${tp.url}/api/admin/governance/kill-switch/arm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ reason: 'real incident' })
    })
  t.equal((await arm(auth)).status, 200)
  const disarm = await fetch(`${tp.url}/api/admin/governance/kill-switch/disarm`, { method: 'POST', headers: auth })
  t.equal(disarm.status, 200)

  let refused = 0
  await flood(1500, 16, async () => {
    const r = await arm({})
    await r.arrayBuffer()
    if (r.status === 401) refused++
  })
  t.equal(refused, 1500, 'every anonymous arm is refused')

  const latest = await get('/api/admin/audit')
  t.equal(latest.status, 200)
  const real = latest.body.filter((e: any) => e.principal === 'ops')
  t.same(
    real.map((e: any) => e.action),
    ['governance.kill_switch.arm', 'governance.kill_switch.disarm'],
    'the default page still holds the real arm and disarm, oldest first'
  )
  t.match((await get('/api/admin/audit?callers=authenticated')).body, [
    { principal: 'ops', action: 'governance.kill_switch.arm', success: true, message: 'real incident' },
    { principal: 'ops', action: 'governance.kill_switch.disarm', success: true }
  ])

  const counted = Number(latest.headers.get('x-anonymous-denied'))
  const dropped = Number(latest.headers.get('x-anonymous-denied-dropped'))
  t.equal(counted, 1500, 'every denied anonymous attempt is counted')
  const sampled = (await get('/api/admin/audit?callers=anonymous&limit=10000')).body
  t.ok(sampled.length >= 1, `${sampled.length} of them kept as a sample`)
  t.ok(
    sampled.every((e: any) => e.principal === 'anonymous' && e.action === 'governance.kill_switch.arm.denied.anonymous')
  )
  t.equal(sampled.length + dropped, 1500, 'the rest are dropped, and counted as such')
  t.ok(dropped > 0)
  t.equal(await metric('audit', 'kept'), sampled.length, '/metrics counts the kept ones')
  t.equal(await metric('audit', 'dropped'), dropped, 'and the dropped ones')
})

t.test('the audit pages by cursor through everything retained, oldest first within a page', async (t) => {
  const { body: all, headers } = await get('/api/admin/audit?limit=10000')
  const kept = Number(headers.get('x-anonymous-denied')) - Number(headers.get('x-anonymous-denied-dropped'))
  t.equal(all.length, 2 + kept, "the operator's two entries and the sampled anonymous ones")
  const { entries, pages } = await walk('/api/admin/audit', 3)
  t.ok(pages > 1)
  // each page is the one before the previous: reversed, the pages read oldest first
  t.same(entries.reverse().flat(), all, 'every entry once, in order')
})

t.test("anonymous turns do not push an authenticated turn's decisions out of reach", async (t) => {
  const turn = (message: string, headers: Record<string, string> = {}) =>
    postTurn(tp.url, '/platform/agent/demo', JSON.stringify({ message }), headers)
  t.equal((await turn('the real question about plugins', auth)).status, 200)
  // half admitted, half denied by the deny list
  await flood(1250, 16, (i) => turn(i % 2 === 0 ? `hello ${i}` : `spam ${i}`))
  // and one more denial early in a second of its own: sampled however fast the flood went, and
  // the newest anonymous entry (a fast flood's only samples are its oldest, which its own
  // admitted turns may trim)
  await new Promise((r) => setTimeout(r, 1050 - (Date.now() % 1000)))
  await turn('spam, the last')

  // the real turn's evaluations: its message's, and its tool call's (the demo agent looks plugins up)
  const isReal = (d: any) => d.context_snapshot.user_id === 'ops'
  const asked = (d: any) => d.context_snapshot.message === 'the real question about plugins'
  const mine = await get('/api/admin/governance/decisions?callers=authenticated')
  t.equal(mine.status, 200)
  t.ok(mine.body.length > 0 && mine.body.every(isReal), "the authenticated turn's decisions, on the first page")
  t.ok(mine.body.some(asked))

  const latest = await get('/api/admin/governance/decisions')
  const counted = Number(latest.headers.get('x-anonymous-denied'))
  const dropped = Number(latest.headers.get('x-anonymous-denied-dropped'))
  t.equal(counted, 626, 'each denied anonymous turn counted once (its deny)')
  t.ok(dropped > 0 && dropped < counted, `${dropped} of them dropped, the rest sampled`)
  t.equal(await metric('decisions', 'dropped'), dropped)

  // through every page from the newest, the real turn is reached
  const { entries } = await walk('/api/admin/governance/decisions', 500)
  const flat = entries.flat()
  t.ok(flat.some(asked), "paging from the newest reaches the real turn's decisions")
  const anonymous = flat.filter((d) => d.context_snapshot.user_id === undefined)
  // the anonymous part has its own retention: the flood trims only its own older entries
  const denials = anonymous.filter((d) => d.decision === 'deny')
  t.ok(denials.length <= counted - dropped, `${denials.length} sampled denials still retained`)
  t.ok(
    denials.some((d) => d.context_snapshot.message === 'spam, the last'),
    'the newest sampled denial is among them'
  )
})

t.test('decisions page by cursor through everything retained, newest first', async (t) => {
  const all = (await get('/api/admin/governance/decisions?limit=10000')).body
  t.ok(all.length < 10_000, 'one page holds them all')
  const { entries, pages } = await walk('/api/admin/governance/decisions', 97)
  t.ok(pages > 1)
  t.same(entries.flat(), all, 'every entry once, in order')
  const anon = await walk('/api/admin/governance/decisions?callers=anonymous', 250)
  t.same(
    anon.entries.flat(),
    all.filter((d: any) => d.context_snapshot.user_id === undefined),
    'one part alone pages the same way'
  )
})

t.test('a cursor this listing did not write is a 400 that says so', async (t) => {
  const audit = (await get('/api/admin/audit?limit=1')).headers.get('x-next-cursor')!
  const decisions = (await get('/api/admin/governance/decisions?limit=1')).headers.get('x-next-cursor')!
  const anonymous = (await get('/api/admin/governance/decisions?limit=1&callers=anonymous')).headers.get(
    'x-next-cursor'
  )!
  const tampered = Buffer.from(
    JSON.stringify([...JSON.parse(Buffer.from(decisions, 'base64url').toString()).slice(0, 2), [-1, 0]])
  ).toString('base64url')
  for (const [path, cursor] of [
    ['/api/admin/audit', 'not a cursor'],
    ['/api/admin/audit', decisions],
    ['/api/admin/governance/decisions', audit],
    ['/api/admin/governance/decisions', '%%%'],
    ['/api/admin/governance/decisions', 'x'.repeat(600)],
    ['/api/admin/governance/decisions', tampered],
    ['/api/admin/governance/decisions', anonymous]
  ] as const) {
    const r = await get(`${path}?limit=5&cursor=${encodeURIComponent(cursor)}`)
    t.equal(r.status, 400, `${path} refuses ${cursor.slice(0, 20)}`)
    t.equal(r.body.code, 'PLT_ERR_INVALID_CURSOR')
  }
  const r = await get('/api/admin/governance/decisions?callers=everyone')
  t.match(r, { status: 400, body: { code: 'PLT_ERR_INVALID_QUERY' } })
  t.match(await get('/api/admin/audit?callers=everyone'), { status: 400, body: { code: 'PLT_ERR_INVALID_QUERY' } })
})
