// A plugin whose sandbox process dies on every call is not restarted on every call: after the
// second death in a row calls fail at once with 'unavailable' until the backoff has passed.
import t from 'tap'
import { resolve } from 'node:path'
import { loadIsolate } from '../../runtime/plugins/index.js'
import type { SandboxInstance } from '../../runtime/plugins/index.js'

const dir = resolve(import.meta.dirname, '../fixtures/hostile-plugins/array-fill-bomb')
const log = { debug() {}, info() {}, warn() {}, error() {} }
const inst: SandboxInstance = await loadIsolate({
  dir,
  entry: resolve(dir, 'index.js'),
  isolation: 'process',
  manifest: { name: 'bomb' },
  grant: { sandbox: 'isolate', limits: { memoryMb: 32, timeoutMs: 20_000, concurrency: 1 } },
  capabilities: { log }
} as never)
t.teardown(() => inst.dispose())

const call = async (name: string): Promise<unknown> => await inst.invoke({ kind: 'tool', name, args: {} })
const pid = (): number | undefined => (inst as unknown as { backend: { pid?: number } }).backend.pid

t.test('the first death restarts at once; the second starts a backoff during which calls fail fast', async (t) => {
  await t.rejects(call('attack'), { code: 'PLT_ERR_PLUGIN_CALL_FAILED', params: { reason: 'memory' } })
  t.equal(await call('ping'), 'pong', 'restarted at once after one death')
  await t.rejects(call('attack'), { code: 'PLT_ERR_PLUGIN_CALL_FAILED', params: { reason: 'memory' } })
  const before = pid()
  t.equal(before, undefined, 'the dead process is gone')
  await t.rejects(call('ping'), {
    params: { reason: 'unavailable' },
    message:
      /plugin 'bomb' could not be restarted: its sandbox process died 2 times in a row; next restart in \d+\.\d s/
  })
  t.equal(pid(), undefined, 'no process was started during the backoff')
})

t.test('after the backoff the plugin is started again and answers', async (t) => {
  let answer: unknown
  for (let i = 0; i < 100 && answer === undefined; i++) {
    try {
      answer = await call('ping')
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  t.equal(answer, 'pong')
})
