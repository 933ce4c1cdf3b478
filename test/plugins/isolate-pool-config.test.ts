// The pool setting reaches the plugin host from the configuration: a running platform groups its
// isolate plugins into as many sandbox processes as `platform.sandbox.isolate.*` says, counted
// as real child processes of this process in /proc. Bad values are refused naming the key.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { loadConfig } from '../../runtime/areas.js'
import { startWithPlugins, statusOf, tempRoot, toolPlugin, writePlugin } from './helpers.js'

/** Live sandbox processes (children running sandbox-process.js) of this test process. */
function sandboxes(): number[] {
  const out: number[] = []
  for (const tid of readdirSync('/proc/self/task')) {
    let kids: string
    try {
      kids = readFileSync(`/proc/self/task/${tid}/children`, 'utf8')
    } catch {
      continue
    }
    for (const k of kids.split(' ').filter((x) => x.trim() !== '')) {
      try {
        if (readFileSync(`/proc/${k}/cmdline`, 'utf8').includes('sandbox-process')) out.push(Number(k))
      } catch {
        /* exited */
      }
    }
  }
  return out
}

for (const [perProcess, expected] of [
  [2, 2],
  [1, 3],
  [8, 1]
] as const) {
  t.test(
    `plugins-per-process ${perProcess}: three isolate plugins run in ${expected} sandbox process(es)`,
    async (t) => {
      const before = sandboxes().length
      // processes 0 (no cap) also makes this a pool of its own: no other test's processes are reused
      const root = tempRoot('isolate-pool-config-')
      for (const n of ['p1', 'p2', 'p3']) writePlugin(root, n, { index: toolPlugin(`tool_${n}`, n) })
      const tp = await startWithPlugins(root, {
        'platform.sandbox.isolate.plugins-per-process': perProcess,
        'platform.sandbox.isolate.processes': 0
      })
      t.teardown(tp.close)
      for (const n of ['p1', 'p2', 'p3']) t.equal(statusOf(tp, n)?.state, 'live', `${n} is live`)
      t.equal(sandboxes().length - before, expected)
    }
  )
}

t.test('bad pool settings are refused naming the key', async (t) => {
  t.throws(() => loadConfig({ env: {}, overrides: { 'platform.sandbox.isolate.plugins-per-process': 0 } }), {
    code: 'PLT_ERR_CONFIG_INVALID',
    message: /platform\.sandbox\.isolate\.plugins-per-process/
  })
  t.throws(() => loadConfig({ env: {}, overrides: { 'platform.sandbox.isolate.processes': -1 } }), {
    code: 'PLT_ERR_CONFIG_INVALID',
    message: /platform\.sandbox\.isolate\.processes/
  })
  const c = loadConfig({ env: {}, overrides: {} })
  t.equal(c.get('platform.sandbox.isolate.plugins-per-process'), 8)
  t.equal(c.get('platform.sandbox.isolate.processes'), 4)
})
