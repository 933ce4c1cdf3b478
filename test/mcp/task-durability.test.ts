import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startTestPlatform } from '../helpers/platform.js'
import { installMcp } from '../../runtime/mcp/install.js'
import { addFixtures, modern, openSession } from './helpers.js'

// Tasks are kept in LMDB: a finished task's result outlives a restart, a task still running when
// the process stops reads as failed (interrupted) afterwards, and the TTL still removes them.

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } }
const INTERRUPTED = 'interrupted: server restarted'

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

async function start(dataDir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const tp = await startTestPlatform(
    { 'platform.data-dir': dataDir },
    {
      install: async (p) => {
        await installMcp(p)
        await addFixtures(p)
      }
    }
  )
  return { url: `${tp.url}/platform/mcp`, close: tp.close }
}

async function until(get: () => Promise<any>, done: (v: any) => boolean): Promise<any> {
  let v
  for (let i = 0; i < 100; i++) {
    v = await get()
    if (done(v)) return v
    await sleep(30)
  }
  return v
}

t.test('a restart keeps finished tasks and fails the ones that were running', async (t) => {
  const dir = tempDir(t)
  const a = await start(dir)
  // 2026-07-28 tasks extension: one that finishes, one that is still running at shutdown
  const done = (
    await modern(
      a.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0.2, label: 'kept' } },
      { caps: TASKS }
    )
  ).body.result
  const running = (
    await modern(a.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } }, { caps: TASKS })
  ).body.result
  t.equal(done.resultType, 'task')
  t.equal(running.resultType, 'task')
  const finished = await until(
    async () => (await modern(a.url, 'tasks/get', { taskId: done.taskId }, { caps: TASKS })).body.result,
    (r) => r.status === 'completed'
  )
  t.equal(finished.status, 'completed')
  // 2025-11-25 task form: the same, through a session (sessions survive restarts too)
  const s = await openSession(a.url)
  const legacyDone = (
    await s.call('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0.1, label: 'legacy' },
      task: { ttl: 60_000 }
    })
  ).body.result.task
  const legacyRunning = (
    await s.call('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: { ttl: 60_000 } })
  ).body.result.task
  t.match((await s.call('tasks/result', { taskId: legacyDone.taskId })).body.result.content[0].text, /Computed legacy/)
  await a.close()

  const b = await start(dir)
  t.teardown(b.close)
  const kept = (await modern(b.url, 'tasks/get', { taskId: done.taskId }, { caps: TASKS })).body.result
  t.match(kept, { status: 'completed', taskId: done.taskId })
  t.match(kept.result.content[0].text, /Computed kept/, 'the result is still there after the restart')
  const failed = (await modern(b.url, 'tasks/get', { taskId: running.taskId }, { caps: TASKS })).body.result
  t.match(failed, { status: 'failed', statusMessage: INTERRUPTED })
  // the session dialect sees the same, through its restored session
  const call = async (method: string, params: Record<string, unknown>): Promise<any> => {
    const r = await fetch(b.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'mcp-session-id': s.sid,
        'mcp-protocol-version': '2025-11-25'
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
    })
    return await r.json()
  }
  t.match((await call('tasks/result', { taskId: legacyDone.taskId })).result.content[0].text, /Computed legacy/)
  t.match((await call('tasks/get', { taskId: legacyRunning.taskId })).result, {
    status: 'failed',
    statusMessage: INTERRUPTED
  })
  t.match((await call('tasks/result', { taskId: legacyRunning.taskId })).error, { code: -32603, message: INTERRUPTED })
  const listed = (await call('tasks/list', {})).result.tasks.map((x: any) => x.taskId)
  t.ok(
    [done.taskId, running.taskId, legacyDone.taskId, legacyRunning.taskId].every((id) => listed.includes(id)),
    'tasks/list has all four'
  )
  t.equal(
    (await modern(b.url, 'tasks/cancel', { taskId: running.taskId }, { caps: TASKS })).body.result.resultType,
    'complete',
    'cancel of a failed task changes nothing'
  )
  t.equal((await modern(b.url, 'tasks/get', { taskId: running.taskId }, { caps: TASKS })).body.result.status, 'failed')
})

t.test('the TTL still applies across a restart; answered-in-window calls never become tasks', async (t) => {
  const dir = tempDir(t)
  const a = await start(dir)
  const s = await openSession(a.url)
  const short = (await s.call('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: { ttl: 100 } }))
    .body.result.task
  await s.call('tasks/result', { taskId: short.taskId })
  const long = (await s.call('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: { ttl: 60_000 } }))
    .body.result.task
  await s.call('tasks/result', { taskId: long.taskId })
  const sync = (await modern(a.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, { caps: TASKS }))
    .body.result
  t.equal(sync.resultType, 'complete')
  await a.close()
  await sleep(200)
  const b = await start(dir)
  t.teardown(b.close)
  const r = await fetch(b.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'mcp-session-id': s.sid,
      'mcp-protocol-version': '2025-11-25'
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} })
  })
  t.same(
    (await r.json()).result.tasks.map((x: any) => x.taskId),
    [long.taskId],
    'the expired task was dropped at start, the other kept, the sync call left none'
  )
})

// A child runs the real platform from dist/ with a tool that never ends; once the task handle is
// answered the parent kills it with SIGKILL and opens the data directory with a fresh platform.
const child = `
const dist = ${JSON.stringify(new URL('../../dist/runtime/', import.meta.url).href)}
const { loadConfig } = await import(dist + 'areas.js')
const { startPlatform } = await import(dist + 'platform.js')
const { installMcp } = await import(dist + 'mcp/install.js')
const { getMcp } = await import(dist + 'mcp/index.js')
const dir = process.argv[1]
const config = loadConfig({ env: {}, cwd: dir, overrides: { 'platform.server.port': 0, 'platform.server.host': '127.0.0.1', 'platform.data-dir': dir, 'platform.plugins.dirs': [], 'platform.log-level': 'error' } })
const { url } = await startPlatform({ config, install: async (p) => {
  await installMcp(p)
  getMcp(p).registerTool({ name: 'hang', description: 'Never answers', taskSupport: 'optional', handler: () => new Promise(() => {}) })
} })
process.stdout.write('URL ' + url + '\\n')
`

t.test('a task running when the process is SIGKILLed is failed at the next start', async (t) => {
  const dir = tempDir(t)
  const proc = spawn(process.execPath, ['--no-node-snapshot', '--input-type=module', '-e', child, dir], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const exited = new Promise<void>((resolve) => {
    proc.on('exit', () => {
      resolve()
    })
  })
  t.teardown(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL')
  })
  const base = await new Promise<string>((resolve, reject) => {
    let buf = ''
    proc.stdout.on('data', (d: Buffer) => {
      buf += d.toString()
      const m = /URL (\S+)\n/.exec(buf)
      if (m !== null) resolve(m[1]!)
    })
    proc.on('exit', (code) => {
      reject(new Error(`child exited early (${String(code)})`))
    })
  })
  const url = `${base}/platform/mcp`
  const handle = (await modern(url, 'tools/call', { name: 'hang', arguments: {} }, { caps: TASKS })).body.result
  t.match(handle, { resultType: 'task', status: 'working' })
  t.equal((await modern(url, 'tasks/get', { taskId: handle.taskId }, { caps: TASKS })).body.result.status, 'working')
  // killed right after the handle was answered: the handle was written before it was sent
  proc.kill('SIGKILL')
  await exited
  const b = await start(dir)
  t.teardown(b.close)
  const after = (await modern(b.url, 'tasks/get', { taskId: handle.taskId }, { caps: TASKS })).body.result
  t.match(after, { taskId: handle.taskId, status: 'failed', statusMessage: INTERRUPTED })
})
