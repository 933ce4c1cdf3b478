// Isolates of several plugins share a sandbox process. A plugin that crashes the process is the one
// blamed (the crash marker names whose isolate was running), counts the crash, backs off and moves
// to a process of its own; its process-mates lose only their calls in flight and come back by
// themselves on their next call.
import t, { type Test } from 'tap'
import { join, resolve } from 'node:path'
import { rmSync } from 'node:fs'
import { pino } from 'pino'
import { loadIsolate } from '../../runtime/plugins/isolate/index.js'
import type { LoadSpec, SandboxInstance } from '../../runtime/plugins/index.js'
import { rejects, tempRoot, tool, toolPlugin, writePlugin } from './helpers.js'

const root = tempRoot('isolate-pool-')
t.teardown(() => {
  rmSync(root, { recursive: true, force: true })
})
const bombDir = resolve(import.meta.dirname, '../fixtures/hostile-plugins/array-fill-bomb')
const slowDir = writePlugin(root, 'slow', { index: toolPlugin('slow', 'done', 800) })
const quickDir = writePlugin(root, 'quick', { index: toolPlugin('quick', 'ok') })
const log = pino({ level: 'silent' })

function spec(name: string, dir: string, isolatePool: LoadSpec['isolatePool'], timeoutMs = 5000): LoadSpec {
  const grant = {
    sandbox: 'isolate' as const,
    permissions: { net: [], kv: false, env: [] },
    limits: { memoryMb: 32, timeoutMs, concurrency: 4 }
  }
  return {
    dir,
    entry: join(dir, 'index.js'),
    manifest: { name, version: '1.0.0', entry: 'index.js', ...grant },
    grant,
    capabilities: { log },
    isolatePool
  }
}

const pidOf = (inst: SandboxInstance): number | undefined =>
  (inst as unknown as { backend: { pid?: number } }).backend.pid

async function load(
  t: Test,
  pool: LoadSpec['isolatePool'],
  ...plugins: [string, string][]
): Promise<SandboxInstance[]> {
  const out: SandboxInstance[] = []
  for (const [name, dir] of plugins) {
    const inst = await loadIsolate(spec(name, dir, pool))
    t.teardown(() => inst.dispose())
    out.push(inst)
  }
  return out
}

t.test('plugins share processes up to plugins-per-process; 1 gives each plugin its own', async (t) => {
  const [a, b, c] = await load(
    t,
    { processes: 0, pluginsPerProcess: 2 },
    ['quick', quickDir],
    ['slow', slowDir],
    ['bomb', bombDir]
  )
  t.equal(pidOf(a!), pidOf(b!), 'the first two plugins share a process')
  t.not(pidOf(c!), pidOf(a!), 'the third starts another')
  t.equal(((await tool(a!, 'quick', { n: 1 })) as { value: unknown }).value, 'ok')
  t.equal(await tool(c!, 'ping'), 'pong')
  const solo = await load(t, { processes: 0, pluginsPerProcess: 1 }, ['quick', quickDir], ['slow', slowDir])
  t.not(pidOf(solo[0]!), pidOf(solo[1]!), 'plugins-per-process 1: a process per plugin')
  const capped = await load(
    t,
    { processes: 1, pluginsPerProcess: 1 + 1 },
    ['quick', quickDir],
    ['slow', slowDir],
    ['bomb', bombDir]
  )
  t.not(pidOf(capped[0]!), pidOf(a!), 'another setting is another pool')
  t.equal(
    pidOf(capped[2]!),
    pidOf(capped[0]!),
    'with every allowed process full, the next plugin joins the least loaded one'
  )
})

t.test(
  "a plugin that crashes its shared process while a mate is mid-call: the mate's call fails cleanly, its next succeeds",
  async (t) => {
    const [slow, bomb] = await load(t, { processes: 1, pluginsPerProcess: 3 }, ['slow', slowDir], ['bomb', bombDir])
    const shared = pidOf(slow!)
    t.equal(pidOf(bomb!), shared)
    const midCall = tool(slow!, 'slow', { n: 1 })
    await new Promise((resolve) => setTimeout(resolve, 100)) // the slow call is waiting on its timer inside the isolate
    await rejects(
      t,
      tool(bomb!, 'attack'),
      'memory',
      /plugin 'bomb' sandbox process died \(SIGABRT\): V8 ran out of memory/
    )
    await rejects(
      t,
      midCall,
      'crashed',
      /plugin 'slow' lost its shared sandbox process \(SIGABRT\): V8 ran out of memory; plugin 'bomb' crashed it/
    )
    t.same(await tool(slow!, 'slow', { n: 2 }), { value: 'done', args: { n: 2 } }, 'the mate answers its next call')
    t.equal(await tool(bomb!, 'ping'), 'pong', 'the culprit restarts at once after its first crash')
    t.not(pidOf(bomb!), pidOf(slow!), 'the culprit now runs in a process of its own')
    t.not(pidOf(slow!), shared, 'the mate runs in a fresh process')
  }
)

t.test('a plugin quarantined after repeated crashes while its process-mates keep serving', async (t) => {
  const [quick, slow, bomb] = await load(
    t,
    { processes: 1, pluginsPerProcess: 4 },
    ['quick', quickDir],
    ['slow', slowDir],
    ['bomb', bombDir]
  )
  await rejects(t, tool(bomb!, 'attack'), 'memory', /plugin 'bomb' sandbox process died/)
  t.equal(await tool(bomb!, 'ping'), 'pong')
  t.equal(pidOf(quick!), undefined, 'a mate is reloaded on its next call, not before')
  t.equal(((await tool(quick!, 'quick')) as { value: unknown }).value, 'ok')
  t.same(await tool(slow!, 'slow', { n: 0 }), { value: 'done', args: { n: 0 } })
  const matesPid = pidOf(quick!)
  t.ok(matesPid !== undefined && matesPid !== pidOf(bomb!))
  t.equal(pidOf(slow!), matesPid, 'the mates came back together in one process')
  const midCall = tool(slow!, 'slow', { n: 3 })
  await rejects(t, tool(bomb!, 'attack'), 'memory', /plugin 'bomb' sandbox process died/)
  await rejects(
    t,
    tool(bomb!, 'ping'),
    'unavailable',
    /plugin 'bomb' could not be restarted: its sandbox process died 2 times in a row; next restart in \d+\.\d s \(quarantined/
  )
  t.same(await midCall, { value: 'done', args: { n: 3 } }, 'a crash in its own process no longer touches the mates')
  for (let i = 0; i < 5; i++) t.equal(((await tool(quick!, 'quick', { i })) as { value: unknown }).value, 'ok')
  t.equal(pidOf(quick!), matesPid, "the mates' process was never restarted")
  await rejects(t, tool(bomb!, 'ping'), 'unavailable', /quarantined/)
})

t.test("an innocent plugin loading while a mate's load crashes the process is loaded again elsewhere", async (t) => {
  const loadBomb = writePlugin(root, 'load-bomb', {
    index: 'void (new Array(1024 * 1024 * 60).fill())\nexport default {}\n'
  })
  const pool = { processes: 1, pluginsPerProcess: 5 }
  const [quick] = await load(t, pool, ['quick', quickDir])
  const [bombLoad, quickLoad] = await Promise.allSettled([
    loadIsolate(spec('load-bomb', loadBomb, pool)),
    loadIsolate(spec('quick2', quickDir, pool))
  ])
  t.equal(bombLoad.status, 'rejected')
  t.match(
    (bombLoad as PromiseRejectedResult).reason.message,
    /plugin 'load-bomb' failed to load in the isolate sandbox: sandbox process exited while loading \(SIGABRT\)/
  )
  t.equal(quickLoad.status, 'fulfilled', 'the innocent load was retried')
  const q2 = (quickLoad as PromiseFulfilledResult<SandboxInstance>).value
  t.teardown(() => q2.dispose())
  t.equal(((await tool(q2, 'quick')) as { value: unknown }).value, 'ok')
  t.equal(
    ((await tool(quick!, 'quick')) as { value: unknown }).value,
    'ok',
    'the plugin that was already loaded comes back on its next call'
  )
})

t.test(
  'a plugin whose isolate is reset for its time limit moves out of the shared process; its mate stays',
  async (t) => {
    const hogDir = writePlugin(root, 'hog', {
      index: `import { definePlugin, tool } from 'uws-agent-platform/sdk'
export default definePlugin({ tools: [tool({ name: 'spin', run: () => { for (;;) {} } }), tool({ name: 'ping', run: () => 'pong' })] })
`
    })
    const pool = { processes: 1, pluginsPerProcess: 6 }
    const hog = await loadIsolate(spec('hog', hogDir, pool, 300))
    t.teardown(() => hog.dispose())
    const [quick] = await load(t, pool, ['quick', quickDir])
    const shared = pidOf(quick!)
    t.equal(pidOf(hog), shared)
    const spin = tool(hog, 'spin')
    const delayed = tool(quick!, 'quick', { during: 'spin' }) // waits for the shared thread, within its own 5 s limit
    await rejects(t, spin, 'timeout', /plugin 'hog' exceeded its time limit of 300 ms/)
    // asked at once, while the process may still be inside the loop: the ping waits for the abort to
    // be acknowledged, then for the move out, and must not hang on an acknowledgement that never comes
    const ping = tool(hog, 'ping')
    t.equal(((await delayed) as { value: unknown }).value, 'ok', "the mate's call was delayed, not failed")
    t.equal(await ping, 'pong')
    t.not(pidOf(hog), shared, 'the hog reloaded into a process of its own')
    t.equal(pidOf(quick!), shared, 'the mate never left its process')
    t.equal(((await tool(quick!, 'quick')) as { value: unknown }).value, 'ok')
  }
)

t.test(
  "hot reload: the swapped plugin's new isolate joins the same process, which outlives the old instance",
  async (t) => {
    const pool = { processes: 1, pluginsPerProcess: 7 }
    const v2Dir = writePlugin(root, 'quick-v2', { index: toolPlugin('quick', 'v2') })
    const old = await loadIsolate(spec('quick', quickDir, pool))
    const fresh = await loadIsolate(spec('quick', v2Dir, pool))
    t.teardown(() => fresh.dispose())
    const pid = pidOf(fresh)
    t.equal(pidOf(old), pid, 'old and new instance share the process')
    await old.dispose()
    t.equal(((await tool(fresh, 'quick')) as { value: unknown }).value, 'v2')
    t.equal(pidOf(fresh), pid, 'disposing the old instance left the process running')
    await rejects(t, tool(old, 'quick'), 'unavailable', /plugin 'quick' was unloaded/)
  }
)
