// The dashboard's static files: both bases, content types, ETag revalidation, the CSP, the size
// budget, no path out of dashboard/, and nothing served with the admin area off.
import t from 'tap'
import { connect } from 'node:net'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { adminPlatform } from './helpers.js'

const tp = await adminPlatform()
t.teardown(tp.close)

/** A request sent byte for byte (fetch would normalise `..` away before sending). */
function raw(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(tp.port, '127.0.0.1', () => {
      s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
    })
    let out = ''
    s.on('data', (d) => (out += String(d)))
    s.on('end', () => resolve(out))
    s.on('error', reject)
  })
}

t.test('both bases serve the pages and modules with their types and a strict CSP on HTML', async (t) => {
  for (const base of ['/platform/admin', '/admin']) {
    const index = await fetch(tp.url + base + '/')
    t.equal(index.status, 200)
    t.equal(index.headers.get('content-type'), 'text/html; charset=utf-8')
    const csp = index.headers.get('content-security-policy') ?? ''
    t.match(csp, /script-src 'self'/)
    t.notMatch(csp, /unsafe-inline|unsafe-eval|https?:/, 'no inline script, no other origin')
    t.match(csp, /frame-ancestors 'none'/)
    t.equal(index.headers.get('cache-control'), 'no-cache')
    t.equal(index.headers.get('x-content-type-options'), 'nosniff')
    t.match(await index.text(), /<script type="module" src="js\/console.js">/)
    for (const [path, type] of [
      ['/index.html', 'text/html; charset=utf-8'],
      ['/workflow.html', 'text/html; charset=utf-8'],
      ['/evals.html', 'text/html; charset=utf-8'],
      ['/dashboard.css', 'text/css; charset=utf-8'],
      ['/js/console.js', 'text/javascript; charset=utf-8']
    ] as const) {
      const r = await fetch(tp.url + base + path)
      t.equal(r.status, 200, base + path)
      t.equal(r.headers.get('content-type'), type, base + path)
      await r.arrayBuffer()
    }
    const bare = await fetch(tp.url + base, { redirect: 'manual' })
    t.equal(bare.status, 308)
    t.equal(bare.headers.get('location'), base + '/')
  }
})

t.test('an unchanged file revalidates to 304 by its ETag', async (t) => {
  const first = await fetch(tp.url + '/admin/js/api.js')
  const etag = first.headers.get('etag')!
  t.match(etag, /^"[A-Za-z0-9_-]+"$/)
  await first.text()
  const again = await fetch(tp.url + '/admin/js/api.js', { headers: { 'if-none-match': etag } })
  t.equal(again.status, 304)
  t.equal(await again.text(), '')
  const other = await fetch(tp.url + '/admin/js/api.js', { headers: { 'if-none-match': '"stale"' } })
  t.equal(other.status, 200)
  await other.text()
})

t.test('no path leaves dashboard/: traversal, encoded dots and the folder README are 404', async (t) => {
  for (const path of [
    '/platform/admin/../package.json',
    '/platform/admin/..%2fpackage.json',
    '/platform/admin/%2e%2e/%2e%2e/package.json',
    '/admin/js/../../package.json',
    '/admin/README.md',
    '/admin/js/',
    '/admin//etc/passwd'
  ]) {
    const res = await raw(path)
    t.match(res, /^HTTP\/1\.1 404 /, path)
    t.notMatch(res, /"name":\s*"agent-platform"/, path)
  }
})

t.test('JavaScript and CSS stay under 200 KB in total, uncompressed', async (t) => {
  const dir = fileURLToPath(new URL('../../dashboard', import.meta.url))
  let total = 0
  const walk = (d: string): void => {
    for (const f of readdirSync(d)) {
      const p = join(d, f)
      if (statSync(p).isDirectory()) walk(p)
      else if (/\.(js|css)$/.test(f)) total += statSync(p).size
    }
  }
  walk(dir)
  t.ok(total > 10_000, `the dashboard has code (${total} bytes)`)
  t.ok(total < 200 * 1024, `${total} bytes of JS and CSS`)
})

t.test('platform.admin.enabled=false serves no dashboard', async (t) => {
  const off = await adminPlatform({ 'platform.admin.enabled': false })
  t.teardown(off.close)
  for (const path of ['/platform/admin/', '/admin/', '/admin/index.html', '/admin/js/console.js']) {
    const r = await fetch(off.url + path)
    t.equal(r.status, 404, path)
    t.equal((await r.json()).code, 'PLT_ERR_NOT_FOUND')
  }
})
