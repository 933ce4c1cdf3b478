// The dashboard stays small and self-contained: everything it serves (pages, modules, styles, icons,
// vendored modules) under 250 KB, and no page, module or stylesheet that loads from another origin.
import t from 'tap'
import { dashboardDir, readDashboard, DASHBOARD_CSP } from '../../runtime/admin/dashboard-files.js'

const files = readDashboard(dashboardDir()!)

t.test('everything the dashboard serves weighs under 250 KB', async (t) => {
  const total = files.reduce((n, f) => n + f.body.length, 0)
  t.comment(`dashboard: ${files.length} files, ${total} bytes`)
  t.ok(total < 250 * 1024, `${total} bytes`)
})

t.test('nothing is loaded from another origin', async (t) => {
  // an absolute or protocol-relative URL where a browser would fetch it: src, href, url(), import, fetch, WebSocket
  const remote =
    /(?:\b(?:src|href)\s*=\s*["']|url\(\s*["']?|\bimport\s*(?:[^'"]*from\s*)?\(?\s*["']|\bfetch\(\s*["'`]|new (?:WebSocket|EventSource)\(\s*["'`])(?:[a-z]+:)?\/\//i
  for (const sample of [
    '<script src="https://cdn.example/x.js">',
    "import { x } from 'https://esm.sh/x'",
    'background: url(//cdn.example/a.png)',
    "new WebSocket('wss://elsewhere/ws')"
  ])
    t.match(sample, remote, `the check sees ${sample}`)
  for (const f of files.filter((f) => /\.(html|js|css|svg)$/.test(f.path)))
    t.notMatch(f.body.toString('utf8'), remote, f.path)
  // and the browser is told the same: every fetch directive is 'self' or none
  for (const d of DASHBOARD_CSP.split(';').map((s) => s.trim()))
    if (/-src /.test(d)) t.match(d, /^[a-z-]+ ('self'|'none')( data:)?$/, d)
})
