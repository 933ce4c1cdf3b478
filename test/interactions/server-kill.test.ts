import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import WebSocket from 'ws'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { testPostgres } from '../helpers/postgres.js'
import { ALICE, Api } from './helpers.js'
import { STREAM } from './stream-helpers.js'

// `serve` of the built CLI (dist/, from `npx tsc`) in a child process, killed with SIGKILL mid-run
const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(root, 'bin', 'platform.js')
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PLATFORM_')))
const INTERRUPTED = 'interrupted: server restarted'

/** Nests dotted keys into the mapping a platform.yaml holds (JSON is YAML). */
function nested(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, any> = {}
  for (const [k, v] of Object.entries(flat)) {
    const path = k.split('.')
    let at = out
    for (const p of path.slice(0, -1)) at = at[p] ??= {}
    at[path.at(-1)!] = v
  }
  return out
}

/** Starts `platform serve` on port 0 with `config`; resolves with its URL once it listens. */
function serve(dir: string, config: Record<string, unknown>): Promise<{ proc: ChildProcess; url: string }> {
  const file = join(dir, 'platform.yaml')
  writeFileSync(file, JSON.stringify(nested(config)))
  const args = ['--no-node-snapshot', bin, 'serve', '--config', file, '--port', '0', '--host', '127.0.0.1']
  const proc = spawn(process.execPath, [...args, '--data', join(dir, 'data'), '--log-level', 'warn'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'ignore', 'pipe']
  })
  return new Promise((resolve, reject) => {
    let err = ''
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString()
      const m = /^platform listening on (http:\/\/\S+)$/m.exec(err)
      if (m !== null) resolve({ proc, url: m[1]! })
    })
    proc.on('exit', (code) => reject(new Error(`serve exited ${String(code)}: ${err}`)))
  })
}

const exited = (proc: ChildProcess): Promise<void> =>
  new Promise((resolve) =>
    proc.exitCode !== null || proc.signalCode !== null ? resolve() : proc.on('exit', () => resolve())
  )

/**
 * Follows the live stream of `id` until `enough` steps arrived; resolves with the steps seen, each
 * published only once the store acknowledged it.
 */
function follow(url: string, id: string, enough: number): Promise<{ steps: any[]; ws: WebSocket }> {
  return new Promise((resolve, reject) => {
    const steps: any[] = []
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${STREAM}?id=${id}&access_token=${ALICE}`)
    ws.on('message', (d) => {
      const f = JSON.parse(String(d))
      if (f.type === 'interaction-step') steps.push(f.step)
      if (f.type === 'interaction-terminal') reject(new Error(`the run ended before the kill: ${String(d)}`))
      if (steps.length === enough) resolve({ steps, ws })
    })
    ws.on('error', reject)
  })
}

/** Runs one background turn on a fresh server, SIGKILLs it mid-run, restarts it and reads the turn back. */
async function killDuringRun(t: Test, store: Record<string, unknown>): Promise<void> {
  const model = await new OpenAiServer().start()
  t.teardown(() => model.close())
  // 400 deltas 25 ms apart: the run lasts ~10 s, far beyond the kill
  model.chat = () => ({
    stream: sseEvents([
      ...Array.from({ length: 400 }, (_, i) => deltaChunk({ content: `d${i} ` })),
      deltaChunk({}, 'stop')
    ]),
    intervalMs: 25
  })
  const dir = mkdtempSync(join(tmpdir(), 'interactions-kill-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const config = {
    'platform.plugins.dirs': [],
    'platform.interactions.http-write-enabled': true,
    'platform.interactions.text-coalesce-ms': 0,
    'platform.auth.tokens': [{ token: ALICE, principal: 'alice' }],
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model',
    ...store
  }
  const first = await serve(dir, config)
  t.teardown(() => first.proc.kill('SIGKILL'))
  const api = new Api(first.url)
  const created = await api.create({ message: 'long job', background: true })
  t.equal(created.status, 200)
  t.equal(created.body.status, 'RUNNING')
  const id = created.body.id
  const { steps: seen, ws } = await follow(first.url, id, 12)
  first.proc.kill('SIGKILL')
  await exited(first.proc)
  ws.terminate()
  t.equal(first.proc.signalCode, 'SIGKILL', 'the server died by SIGKILL')
  t.ok(seen.length >= 12, `${seen.length} steps acknowledged before the kill`)

  const second = await serve(dir, config)
  t.teardown(async () => {
    second.proc.kill('SIGTERM')
    await exited(second.proc)
  })
  const after = await new Api(second.url).get(id)
  t.equal(after.status, 200)
  t.match(after.body, { id, status: 'FAILED', errorMessage: INTERRUPTED })
  const kept = after.body.steps
  t.same(
    kept.map((s) => s.seq),
    kept.map((_, i) => i),
    'seqs 0..n-1 without gap'
  )
  for (const s of seen) t.same(kept[s.seq], s, `acknowledged step ${s.seq} kept as it was streamed`)
  t.match(kept.at(-1), { type: 'error', text: INTERRUPTED })
  t.equal(kept.filter((s) => s.type === 'error').length, 1, 'one terminal step')
}

t.test('kill -9 of the server during a background run on LMDB', async (t) => {
  await killDuringRun(t, { 'platform.interactions.store': 'lmdb' })
})

t.test('kill -9 of the server during a background run on Postgres', async (t) => {
  const pg = await testPostgres(t)
  if (pg === undefined) return
  const url = await pg.database(t)
  await killDuringRun(t, { 'platform.interactions.store': 'postgres', 'platform.interactions.postgres.url': url })
})
