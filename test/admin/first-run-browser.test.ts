// A real first start (the built CLI, a fresh data directory, no token configured): the printed
// dashboard URL signs the browser in, the token leaves the address bar, it is printed once and
// written nowhere else, and a restart accepts it without printing another.
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { launchChromium, SHOTS } from '../helpers/browser.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PLATFORM_')))
const data = mkdtempSync(join(tmpdir(), 'first-run-browser-'))

interface Served {
  proc: ChildProcess
  url: string
  stdout: () => string
  stderr: () => string
}

/** `platform serve` on a free loopback port; resolves once the banner's plugin row is out. */
function serve(): Promise<Served> {
  return new Promise((resolve, reject) => {
    const args = ['bin/platform.js', 'serve', '--port', '0', '--data', data, '--log-level', 'debug']
    const proc = spawn(process.execPath, args, { cwd: root, env })
    let out = ''
    let err = ''
    proc.stdout.on('data', (d) => (out += d))
    proc.stderr.on('data', (d) => {
      err += d
      const m = /^platform listening on (http:\/\/\S+)$/m.exec(err)
      if (m !== null && /^ {2}plugins {4}/m.test(err))
        resolve({ proc, url: m[1]!, stdout: () => out, stderr: () => err })
    })
    proc.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)))
  })
}

async function stop(s: Served): Promise<void> {
  const done = new Promise((r) => s.proc.on('exit', r))
  s.proc.kill('SIGTERM')
  await done
}

const browser = await launchChromium()
const first = await serve()
t.teardown(() => first.proc.kill('SIGKILL'))
const line = /^ {2}dashboard {2}(\S+#token=(\S+))$/m.exec(first.stderr())
const token = line?.[2] ?? ''

t.test(
  'the first start prints a dashboard URL carrying a new admin token, once, and keeps only its hash',
  async (t) => {
    t.ok(line, 'a dashboard URL with a token')
    t.equal(line![1], `${first.url}/platform/admin/#token=${token}`)
    t.equal(first.stderr().split(token).length - 1, 1, 'printed once')
    t.notMatch(first.stdout(), token, 'in no log record, even at debug')
    const file = join(data, 'first-run-token.json')
    t.equal(statSync(file).mode & 0o777, 0o600)
    t.notMatch(readFileSync(file, 'utf8'), token, 'the data directory holds the hash only')
    t.notMatch(first.stderr(), /no API token/, 'the banner does not say there is no token')
    const audit = (bearer?: string) =>
      fetch(first.url + '/api/admin/audit', {
        headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }
      })
    t.equal((await audit()).status, 401)
    t.equal((await audit(token)).status, 200, 'the token reads what needs a principal')
  }
)

t.test('the page signs in with the URL and takes the token out of the address bar', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  page.setDefaultTimeout(8000)
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(String(e)))
  await page.goto(line![1]!)
  await page.locator('#stream-state.live').waitFor()
  t.notMatch(page.url(), 'token', 'the address bar no longer holds it')
  t.match(page.url(), /\/platform\/admin\/(#overview)?$/)
  t.equal(await page.evaluate(() => sessionStorage.getItem('platform.admin.token')), token, 'kept as a pasted one is')
  t.equal(await page.inputValue('#token'), token, 'shown in the token field (masked)')
  // a content read that needs a principal now works from the page
  await page.getByRole('tab', { name: 'Audit' }).click()
  await page.locator('#panel-audit:not([aria-busy=true])').waitFor()
  t.equal(await page.locator('#panel-audit .error').count(), 0, 'no refusal on the audit tab')
  await page.getByRole('tab', { name: 'Overview' }).click()
  await page.screenshot({ path: join(SHOTS, 'first-run.png') })
  t.same(errors, [])
  await context.close()
})

t.test('a restart accepts the same token and prints none', async (t) => {
  await stop(first)
  const second = await serve()
  t.teardown(() => stop(second))
  t.notMatch(second.stderr(), '#token=')
  t.match(second.stderr(), /^ {2}token {6}the first-run admin token of .*first-run-token\.json .*token create/m)
  const res = await fetch(second.url + '/api/admin/audit', { headers: { authorization: `Bearer ${token}` } })
  t.equal(res.status, 200)
})
