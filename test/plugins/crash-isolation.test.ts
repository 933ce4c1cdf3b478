// Evidence for the isolate tier's design (docs/sandboxes.md): a hostile plugin can abort a process
// that hosts its isolate despite isolated-vm's memory limit, so isolates run in a sandbox process.
// Each case runs in a throwaway host process so the abort cannot take this test down.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const root = resolve(import.meta.dirname, '../..')
const loader = pathToFileURL(resolve(root, 'dist/runtime/plugins/isolate/index.js')).href

function host(
  isolation: 'in-process' | 'process',
  plugin: string
): { status: number | null; signal: string | null; stdout: string } {
  const dir = resolve(root, 'test/fixtures/hostile-plugins', plugin)
  const code = `
    const { loadIsolate } = await import(${JSON.stringify(loader)})
    const log = { debug () {}, info () {}, warn () {}, error () {} }
    const inst = await loadIsolate({ dir: ${JSON.stringify(dir)}, entry: ${JSON.stringify(resolve(dir, 'index.js'))}, isolation: '${isolation}',
      manifest: { name: '${plugin}' }, grant: { sandbox: 'isolate', limits: { memoryMb: 32, timeoutMs: 20000, concurrency: 1 } }, capabilities: { log } })
    try { console.log('result', JSON.stringify(await inst.invoke({ kind: 'tool', name: 'attack', args: {} }))) } catch (e) { console.log('failed', e.params.reason, e.message) }
    console.log('host alive')
    await inst.dispose()`
  const r = spawnSync(process.execPath, ['--no-node-snapshot', '--input-type=module', '-e', code], {
    encoding: 'utf8',
    timeout: 60_000
  })
  return { status: r.status, signal: r.signal, stdout: r.stdout }
}

// array-fill-bomb aborts V8 every time; other bombs (object keys, string spread)
// are usually, not always, caught by the heap limit
for (const plugin of ['array-fill-bomb']) {
  t.test(`${plugin}: an in-process isolate takes its host process down`, async (t) => {
    const r = host('in-process', plugin)
    t.equal(r.signal, 'SIGABRT', 'V8 aborted the whole host process')
    t.notMatch(r.stdout, /host alive/)
  })

  t.test(`${plugin}: in a sandbox process the host survives and the call fails with memory`, async (t) => {
    const r = host('process', plugin)
    t.equal(r.status, 0)
    t.match(r.stdout, /failed memory plugin '.*' sandbox process died \(SIGABRT\): V8 ran out of memory/)
    t.match(r.stdout, /host alive/)
  })
}
