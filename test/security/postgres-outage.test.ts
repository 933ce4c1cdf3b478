// Postgres out of reach (issue 22 item 15): readiness reports the store, requests get 503 with a
// hint instead of a bare 500, what was acknowledged is still there once the server is back (no
// restart of the platform), and a server unreachable at start-up is one line and exit 78.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { postgresBinDir, startPostgresCluster } from '../../bench/lib/postgres-cluster.js'
import { testPostgres } from '../helpers/postgres.js'
import { startInteractions, ALICE } from '../interactions/helpers.js'

const pg = await testPostgres(t)

async function until(what: string, ok: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const readiness = async (url: string) => {
  const r = await fetch(`${url}/readyz`)
  return { status: r.status, body: (await r.json()) as { checks: Record<string, string> } }
}

if (pg !== undefined) {
  t.test('Postgres stopped: readiness DOWN and 503s with a hint; back: recovery without restart', async (t) => {
    // a cluster of its own: this test stops and starts the server
    const cluster = await startPostgresCluster(postgresBinDir()!)
    t.teardown(() => cluster.stop())
    const url = cluster.url.replace('postgres://postgres@', 'postgres://postgres:not-echoed@')
    const tp = await startInteractions({
      'platform.interactions.store': 'postgres',
      'platform.interactions.postgres.url': url
    })
    t.teardown(tp.close)
    const kept = await tp.api.create({ message: 'before the outage' })
    t.equal(kept.status, 200)
    t.match(await readiness(tp.url), { status: 200, body: { checks: { 'interactions-store': 'UP' } } })

    await cluster.pause()
    const write = await tp.api.create({ message: 'during the outage' })
    t.equal(write.status, 503, 'a write is refused with 503')
    t.match(write.body, {
      code: 'PLT_ERR_STORE_UNAVAILABLE',
      error: /PostgreSQL at 127\.0\.0\.1:\d+\/postgres cannot be reached/
    })
    t.match(write.body.hint, /GET \/readyz/)
    t.notMatch(JSON.stringify(write.body), /not-echoed/, 'no credentials in the body')
    const read = await tp.api.get(kept.body.id)
    t.equal(read.status, 503, 'a read is refused the same way')
    await until('readiness reports the store down', async () => (await readiness(tp.url)).status === 503)
    t.match((await readiness(tp.url)).body.checks, { 'interactions-store': 'DOWN' })

    await cluster.resume()
    await until('readiness recovers', async () => (await readiness(tp.url)).status === 200)
    const again = await tp.api.get(kept.body.id)
    t.equal(again.status, 200, 'what was acknowledged before is kept')
    t.equal(again.body.status, 'COMPLETED')
    t.equal((await tp.api.create({ message: 'after' }, ALICE)).status, 200, 'writes work again')
  })
}

t.test('Postgres unreachable at start-up: one line naming the key and the server, exit 78', async (t) => {
  const root = fileURLToPath(new URL('../..', import.meta.url))
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PLATFORM_')))
  const args = [
    join(root, 'bin', 'platform.js'),
    'serve',
    '--port',
    '0',
    '--data',
    mkdtempSync(join(tmpdir(), 'pg-unreachable-')),
    '--log-level',
    'silent',
    '--set',
    'platform.plugins.dirs=[]',
    '--set',
    'platform.interactions.store=postgres',
    '--set',
    // port 1 on loopback: nothing listens there
    'platform.interactions.postgres.url=postgres://u:s3cret@127.0.0.1:1/platform'
  ]
  const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const p = spawn(process.execPath, ['--no-node-snapshot', ...args], { cwd: root, env })
    let stderr = ''
    p.stderr.on('data', (d) => (stderr += d))
    p.on('exit', (code) => resolve({ code, stderr }))
  })
  t.equal(r.code, 78)
  t.match(
    r.stderr.trim(),
    /^platform: platform\.interactions\.postgres\.url: cannot reach PostgreSQL at 127\.0\.0\.1:1\/platform \(ECONNREFUSED\)/
  )
  t.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`)
  t.notMatch(r.stderr, /s3cret/, 'the password is never printed')
})
