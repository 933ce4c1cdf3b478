import type { Test } from 'tap'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './doc-pages.js'

const BIN = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'].find((p) => existsSync(p))

/** The documented nginx configuration of a cluster, which the tests run as it is, ports aside. */
export const NGINX_EXAMPLE = join(ROOT, 'docs', 'examples', 'nginx-cluster.conf')

/** A real nginx for tests: Debian's, in a throwaway directory on a free loopback port. */
export interface TestNginx {
  url: string
  /**
   * One line per request nginx finished (a stream once it ended): `<upstream address> <status>
   * <method> <uri>`, so a test sees which node answered what.
   */
  accessLog(): string[]
}

/**
 * The documented configuration with the test's ports: its three nodes become `upstreams` (as many
 * as the file lists, in order) and its listen port `port` on loopback. Throws when the file no
 * longer has the shape this relies on, so the example and the test cannot drift apart silently.
 */
export function siteConfig(upstreams: number[], port: number): string {
  const text = readFileSync(NGINX_EXAMPLE, 'utf8')
  const servers = [...text.matchAll(/^(\s*server\s+)127\.0\.0\.1:\d+/gm)]
  const listens = [...text.matchAll(/^\s*listen\s+\d+;/gm)]
  if (servers.length !== upstreams.length || listens.length !== 1)
    throw new Error(
      `${NGINX_EXAMPLE}: expected ${upstreams.length} upstream servers on 127.0.0.1 and one listen line, found ${servers.length} and ${listens.length}`
    )
  let i = 0
  return text
    .replace(/^(\s*server\s+)127\.0\.0\.1:\d+/gm, (_, head: string) => `${head}127.0.0.1:${upstreams[i++]}`)
    .replace(/^(\s*)listen\s+\d+;/m, `$1listen 127.0.0.1:${port};`)
}

/**
 * Starts nginx in front of `upstreams` for the test `t` (stopped and removed when `t` ends);
 * undefined, and `t` skipped, when nginx is not installed, except under `CI=true` where that is a
 * broken CI. It runs in the foreground from its own directory, never as the system's service.
 */
export async function testNginx(t: Test, upstreams: number[]): Promise<TestNginx | undefined> {
  if (BIN === undefined) {
    const why = 'nginx is not installed'
    if (process.env.CI === 'true') throw new Error(`${why}: .ci/run installs the nginx-light package`)
    t.skip(`${why}: apt-get install nginx-light to run the tests behind nginx`, () => {})
    return undefined
  }
  const dir = mkdtempSync(join(tmpdir(), 'platform-nginx-'))
  // as root nginx's workers run as nobody: they must reach the temporary directories below
  chmodSync(dir, 0o755)
  const port = await freePort()
  writeFileSync(join(dir, 'site.conf'), siteConfig(upstreams, port))
  // nginx creates every compiled-in module's temporary directory at start: keep each one here
  const built = execFileSync(BIN, ['-V'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const temps = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .filter((m) => m === 'client_body' || m === 'proxy' || !built.includes(`--without-http_${m}_module`))
    .map((m) => `  ${m}_temp_path ${join(dir, `${m}-temp`)};`)
  const log = join(dir, 'access.log')
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'worker_processes 1;',
      'events { worker_connections 1024; }',
      'http {',
      "  log_format upstream '$upstream_addr $status $request_method $request_uri';",
      `  access_log ${log} upstream;`,
      ...temps,
      `  include ${join(dir, 'site.conf')};`,
      '}',
      ''
    ].join('\n')
  )
  const args = ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', 'stderr']
  args.push('-g', `daemon off; pid ${join(dir, 'nginx.pid')}; error_log stderr;`)
  const proc: ChildProcess = spawn(BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  proc.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000)
  })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })
  // nginx says nothing when it is up: it is once its port accepts a connection
  for (const end = Date.now() + 30_000; ;) {
    if (proc.exitCode !== null) throw new Error(`nginx exited ${proc.exitCode}: ${stderr}`)
    if (Date.now() > end) throw new Error(`nginx did not accept connections within 30 s: ${stderr}`)
    if (await accepts(port)) break
    await new Promise((r) => setTimeout(r, 20))
  }
  return {
    url: `http://127.0.0.1:${port}`,
    accessLog: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [])
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}
