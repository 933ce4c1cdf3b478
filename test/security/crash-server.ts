// The crash tests' server: the platform, built in dist/ (`npx tsc`), started in a child process that
// runs `inFlight` writers against itself over HTTP and prints one line per write answered 2xx; the
// parent SIGKILLs it (killWriterAfter) with writes still in flight, then restarts the platform on
// the same data directory to look for every acknowledged write.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { installAreas } from '../../runtime/areas.js'
import { killWriterAfter } from '../helpers/kill-writer.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'

export const TOKEN = 'crash-test-admin-token-0123456789'

/**
 * The repository's demo agent and fleet, run inline (no isolate to start on a loaded machine), the
 * other bundled plugins off: for writes that need an agent.
 */
export const DEMO_AGENTS: Record<string, unknown> = {
  'platform.plugins.dirs': [fileURLToPath(new URL('../../plugins', import.meta.url))],
  'platform.plugins.demo-agent': { sandbox: 'inline' },
  'platform.plugins.demo-fleet': { sandbox: 'inline' },
  'platform.plugins.examples': { enabled: false },
  'platform.plugins.policy-word-limit': { enabled: false },
  'platform.plugins.scope-keywords': { enabled: false }
}

/** Writes on, an operator's token; each test adds what its write needs. */
export const BASE_CONFIG: Record<string, unknown> = {
  'platform.plugins.dirs': [],
  'platform.admin.http-write-enabled': true,
  'platform.interactions.http-write-enabled': true,
  'platform.ai.governance.kill-switch.enabled': true,
  'platform.auth.tokens': [{ token: TOKEN, principal: 'alice', roles: ['admin'] }]
}

const dist = (path: string): string => JSON.stringify(new URL(`../../dist/runtime/${path}`, import.meta.url).href)

/**
 * The child: `write` is the source of `async (i, call) => ack`, where `call(method, path, body)`
 * answers the parsed JSON of a 2xx (and throws otherwise); `ack` (JSON) is printed once answered.
 */
const child = (write: string): string => `
const { startPlatform } = await import(${dist('platform.js')})
const { installAreas, loadConfig } = await import(${dist('areas.js')})
const arg = JSON.parse(process.argv[1])
const config = loadConfig({ env: {}, cwd: arg.dir, overrides: {
  'platform.server.port': 0, 'platform.server.host': '127.0.0.1', 'platform.data-dir': arg.dir,
  'platform.log-level': 'error', ...arg.config } })
const { url } = await startPlatform({ config, install: installAreas, logDestination: process.stderr })
// plugins load after the server listens: write once it is ready (its agents are there)
while ((await fetch(url + '/readyz')).status !== 200) await new Promise((r) => setTimeout(r, 50))
const headers = { authorization: 'Bearer ' + arg.token, 'content-type': 'application/json' }
async function call(method, path, body) {
  const r = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await r.text()
  if (!r.ok) throw new Error(method + ' ' + path + ' answered ' + r.status + ': ' + text)
  return text === '' ? null : JSON.parse(text)
}
const write = ${write}
let next = 0
async function writer() {
  for (;;) {
    const ack = await write(next++, call)
    process.stdout.write(JSON.stringify(ack) + '\\n')
  }
}
for (let w = 0; w < arg.inFlight; w++)
  writer().catch((err) => { process.stderr.write(String(err?.stack ?? err) + '\\n'); process.exit(1) })
`

export interface Trial {
  /** Every write answered 2xx before the kill landed, as the child printed them. */
  acked: unknown[]
  /** The platform restarted on the killed one's data directory (closed by the test's teardown). */
  after: TestPlatform
  /** A request to the restarted platform with the operator's token. */
  call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>
}

/**
 * One crash: starts the child on a fresh data directory, SIGKILLs it once `killAt` writes were
 * acknowledged (with `inFlight - 1` more on their way), and restarts the platform on that directory.
 */
export async function crashTrial(
  t: Test,
  write: string,
  opts: {
    config?: Record<string, unknown>
    /** Config of the restarted platform on top of `config` (what the reads after the crash need). */
    after?: Record<string, unknown>
    killAt: number
    inFlight?: number
  }
): Promise<Trial> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-crash-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const config = { ...BASE_CONFIG, ...opts.config }
  const arg = JSON.stringify({ dir, config, token: TOKEN, inFlight: opts.inFlight ?? 4 })
  const lines = await killWriterAfter(child(write), arg, opts.killAt, ['--no-node-snapshot'])
  const acked = lines.map((l) => JSON.parse(l) as unknown)
  t.ok(acked.length >= opts.killAt, `${acked.length} writes acknowledged before the kill`)
  const after = await startTestPlatform(
    { ...config, ...opts.after, 'platform.data-dir': dir },
    { install: installAreas }
  )
  t.teardown(after.close)
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const r = await fetch(after.url + path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await r.text()
    return { status: r.status, body: text === '' ? null : JSON.parse(text) }
  }
  return { acked, after, call }
}
