import t, { type Test } from 'tap'
import { join } from 'node:path'
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { startTestPlatform } from '../helpers/platform.js'
import { loadIsolate } from '../../runtime/plugins/isolate/index.js'
import type { LoadSpec, SandboxInstance } from '../../runtime/plugins/index.js'
import { HEALTHY_FIXTURE, runTierContract } from './tier-contract.js'
import { rejects, tool } from './helpers.js'

const tp = await startTestPlatform()
t.teardown(tp.close)

for (const isolation of ['process', 'in-process'] as const) {
  runTierContract(t, {
    tier: 'isolate',
    label: isolation,
    load: loadIsolate,
    platform: tp,
    spec: { isolation },
    stopsRunawayCode: true,
    timeoutMessage: /exceeded its time limit of 300 ms/,
    countsFailures: true,
    argsAsJson: true,
    wrapsThrows: true,
    sharesModuleState: true,
    missingEntry: /no such file/
  })
}

/** The load request of a plugin named `healthy` in `dir`, granted what its manifest asks. */
const specOf = (
  dir: string,
  isolation?: 'process' | 'in-process',
  limits = { memoryMb: 32, timeoutMs: 5000, concurrency: 8 }
): LoadSpec => ({
  dir,
  entry: join(dir, 'index.js'),
  manifest: {
    name: 'healthy',
    version: '1.0.0',
    entry: 'index.js',
    sandbox: 'isolate',
    permissions: { net: [], kv: false, env: [] },
    limits
  },
  grant: { sandbox: 'isolate', permissions: { net: [], kv: false, env: [] }, limits },
  capabilities: { log: tp.platform.logger },
  ...(isolation === undefined ? {} : { isolation })
})

for (const isolation of ['process', 'in-process'] as const) {
  // the first call in flight is kept apart from the others on both sides of the isolate: each call
  // must still settle with its own outcome whichever of them ends first
  t.test(
    `isolate (${isolation}): calls beside a waiting one, and after it ends, each get their own outcome`,
    async (t) => {
      const inst = await loadIsolate(specOf(HEALTHY_FIXTURE, isolation))
      t.teardown(() => inst.dispose())
      const ac = new AbortController()
      const first = tool(inst, 'watch_abort', {}, { signal: ac.signal })
      const second = tool(inst, 'sleep', { ms: 50 })
      t.equal(await tool(inst, 'add', { a: 1, b: 2 }), 3, 'a synchronous call beside two waiting ones')
      ac.abort()
      await rejects(t, first, 'cancelled', /cancelled/)
      t.same(await tool(inst, 'echo', { x: [1] }), { x: [1] }, 'a call while the second still waits')
      t.same(await second, { aborted: false }, 'the second settles with its own result')
      await rejects(t, tool(inst, 'nope'), 'threw', /unknown tool 'nope'/)
      t.equal(await tool(inst, 'add', { a: 2, b: 2 }), 4, 'and the instance keeps serving')
    }
  )
}

// a call names a contribution the isolate already knows by number: every call must still reach
// the contribution it names, in any order, and after the isolate is reset (both lists start again)
for (const isolation of ['process', 'in-process'] as const)
  t.test(`isolate (${isolation}): each call reaches the contribution it names, before and after a reset`, async (t) => {
    const inst = await loadIsolate(specOf(HEALTHY_FIXTURE, isolation, { memoryMb: 32, timeoutMs: 300, concurrency: 4 }))
    t.teardown(() => inst.dispose())
    const round = async (label: string): Promise<void> => {
      t.equal(await tool(inst, 'text', { s: 'a' }), 'a', label)
      t.equal(await tool(inst, 'add', { a: 1, b: 2 }), 3, label)
      await rejects(t, tool(inst, 'nope'), 'threw', /unknown tool 'nope'/)
      t.same(await inst.invoke({ kind: 'resource', name: 'healthy://readme', args: { uri: 'healthy://readme' } }), {
        text: 'hi'
      })
      t.same(await tool(inst, 'echo', { x: 1 }), { x: 1 }, label)
      t.equal(await tool(inst, 'add', { a: 2, b: 2 }), 4, label)
      t.equal(await tool(inst, 'text', { s: 'b' }), 'b', label)
    }
    await round('first calls')
    await round('known by number')
    await rejects(t, tool(inst, 'loop'), 'timeout', /time limit/)
    await tool(inst, 'echo', { x: 0 }) // a new first contribution after the reset
    await round('after the reset')
  })

// arguments and results cross as copies: neither side can reach the other's objects
t.test('isolate: a plugin mutating its arguments or a returned object changes nothing on the other side', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iso-copy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(
    join(dir, 'index.js'),
    `import { definePlugin, tool } from 'uws-agent-platform/sdk'
const kept = { n: 1, list: [1] }
export default definePlugin({ tools: [
  tool({ name: 'mutate', run: (args) => { args.n = 99; args.list.push(99); return args } }),
  tool({ name: 'kept', run: () => kept })
] })
`
  )
  for (const isolation of ['process', 'in-process'] as const) {
    const inst = await loadIsolate(specOf(dir, isolation))
    const args = { n: 1, list: [1] }
    const out = (await tool(inst, 'mutate', args)) as typeof args
    t.same(args, { n: 1, list: [1] }, `${isolation}: the caller's arguments are untouched`)
    t.same(out, { n: 99, list: [1, 99] }, `${isolation}: the plugin saw and returned its own copy`)
    const got = (await tool(inst, 'kept')) as { n: number; list: number[] }
    got.n = 42
    got.list.push(42)
    t.same(await tool(inst, 'kept'), { n: 1, list: [1] }, `${isolation}: a result is a copy of the plugin's object`)
    await inst.dispose()
  }
})

// what only an isolate refuses: Node built-ins, bare specifiers, paths out of the plugin folder,
// and a load that never ends
t.test('load errors name what the isolate refuses', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iso-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const spec = (folder: string): LoadSpec => ({
    ...specOf(join(dir, folder), undefined, { memoryMb: 32, timeoutMs: 300, concurrency: 4 }),
    metrics: tp.platform.metrics
  })
  const cases: [string, string, RegExp][] = [
    ['node-import', 'import fs from "node:fs"; export default fs', /'node:fs' refused/],
    ['bare', 'import x from "lodash"; export default x', /'lodash' refused: bare specifiers/],
    ['escape', 'import x from "../../etc/passwd.js"; export default x', /refused/],
    ['absolute', 'import x from "/etc/passwd"; export default x', /'\/etc\/passwd' refused/],
    ['loop', 'for (;;) {}', /time limit|timed out/]
  ]
  for (const [name, code, re] of cases) {
    mkdirSync(join(dir, name))
    writeFileSync(join(dir, name, 'index.js'), code)
    await t.rejects(loadIsolate(spec(name)), re, name)
  }
})

/** Two in-process instances of the healthy plugin: time limits of 60 s and of 300 ms. */
async function longAndShort(t: Test): Promise<SandboxInstance[]> {
  const insts: SandboxInstance[] = []
  t.teardown(async () => {
    for (const inst of insts) await inst.dispose()
  })
  for (const timeoutMs of [60_000, 300])
    insts.push(await loadIsolate(specOf(HEALTHY_FIXTURE, 'in-process', { memoryMb: 32, timeoutMs, concurrency: 8 })))
  return insts
}

// one watchdog per thread holds every isolate's time limit: a runaway is stopped as a timeout of its
// own plugin, after a burst of another plugin's calls and while that plugin has a call in flight,
// and only the runaway's isolate is reset
t.test(
  'isolate (in-process): a runaway is stopped by its own time limit beside a busy plugin with a longer one',
  async (t) => {
    const [long, short] = await longAndShort(t)
    for (let i = 0; i < 2000; i++) await tool(long, 'add', { a: i, b: 1 })
    const waiting = tool(long, 'sleep', { ms: 100 })
    await rejects(t, tool(short, 'loop'), 'timeout', /exceeded its time limit of 300 ms/)
    t.same(await waiting, { aborted: false }, "the other plugin's call in flight is untouched")
    t.equal(await tool(long, 'add', { a: 1, b: 2 }), 3, 'the other plugin keeps its isolate')
    t.equal(await tool(short, 'add', { a: 2, b: 2 }), 4, 'the runaway plugin serves again from a new isolate')
    await rejects(t, tool(short, 'loop'), 'timeout', /exceeded its time limit of 300 ms/)
    t.equal(await tool(short, 'add', { a: 3, b: 2 }), 5, 'and again after a second reset')
  }
)

// a host callback may enter another isolate while the first one waits for it (a progress listener
// calling a plugin): the inner entry is held to its own limit, and the outer one to its own again after
t.test(
  'isolate (in-process): a runaway entered from inside another plugin is stopped; the outer call goes on',
  async (t) => {
    const [outer, inner] = await longAndShort(t)
    const nested: Promise<unknown>[] = []
    const onProgress = (): void => {
      const p = nested.length === 0 ? tool(inner, 'loop') : tool(inner, 'add', { a: 1, b: 1 })
      p.catch(() => {}) // settles while the outer call still runs; checked below
      nested.push(p)
    }
    t.same(await outer.invoke({ kind: 'tool', name: 'steps', args: { n: 2 } }, { onProgress }), { done: 2 })
    t.equal(nested.length, 2, 'both progress reports entered the other plugin')
    await rejects(t, nested[0]!, 'timeout', /exceeded its time limit of 300 ms/)
    t.equal(await nested[1], 2, 'the inner plugin serves again')
    t.equal(await tool(outer, 'add', { a: 1, b: 2 }), 3, 'the outer plugin kept its isolate')
  }
)
