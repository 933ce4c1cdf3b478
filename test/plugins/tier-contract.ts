/**
 * The contract every sandbox tier keeps, as one suite each tier's test file runs (hono's
 * `runTest({ newRouter })` pattern): the suite owns the scenarios, the caller owns how an instance
 * is made. A new tier, store or runtime gets its own contract suite the same way: one exported
 * `run<Thing>Contract(t, { load, ...differences })`, called from one test file per implementation.
 *
 * Where a tier genuinely behaves differently, the difference is a named option below with the
 * reason, and the suite asserts the tier's own behaviour exactly; nothing is skipped silently.
 * Every scenario runs against the `healthy` fixture plugin loaded through `load`.
 */
import type { Test } from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { LoadSpec, SandboxInstance, SandboxKind } from '../../runtime/plugins/index.js'
import type { TestPlatform } from '../helpers/platform.js'
import { kvNamespace } from '../helpers/kv-capability.js'
import { tool, rejects, waitFor } from './helpers.js'

export const HEALTHY_FIXTURE = resolve(import.meta.dirname, '../fixtures/plugins/healthy')

export interface TierContractOptions {
  tier: SandboxKind
  /** Loads one instance from a spec, as the loader would for this tier. */
  load: (spec: LoadSpec) => Promise<SandboxInstance>
  /** The running platform whose store, logger and metrics the capabilities use. */
  platform: TestPlatform
  /** Shown in test names when a tier runs the suite more than once (isolate: `process`, `in-process`). */
  label?: string
  /** Extra fields of every spec (isolate: `isolation`). */
  spec?: Partial<LoadSpec>
  /** Memory limit granted, in MB (worker threads need more than an isolate). */
  memoryMb?: number
  /**
   * The tier can stop code that never yields (`for (;;) {}`): isolate and worker. Inline code runs
   * on the host's own thread, where such a call would hang the host: its time limit abandons
   * asynchronous calls only, so its scenario uses a long sleep instead of a loop.
   */
  stopsRunawayCode: boolean
  /** The message of a call over a 300 ms time limit (inline abandons the call; the others stop it). */
  timeoutMessage: RegExp
  /** Sandbox deaths (timeouts) are counted in `platform_plugin_failures_total`; inline has no sandbox to die. */
  countsFailures: boolean
  /**
   * Arguments cross a boundary as JSON (isolate, worker), so a BigInt is refused; inline hands the
   * caller's object to the plugin as it is (callers from the wire only ever have JSON).
   */
  argsAsJson: boolean
  /**
   * A plugin's throw reaches the caller as PLUGIN_CALL_FAILED (reason `threw`) from a sandboxed
   * tier; inline rethrows the plugin's own Error object.
   */
  wrapsThrows: boolean
  /**
   * Calls share one module instance, so the fixture's `active` tool sees the concurrency limit
   * (isolate, inline). Worker calls spread over threads that each have their own module state.
   */
  sharesModuleState: boolean
  /** The load error for an entry file that does not exist. */
  missingEntry: RegExp
}

type Limits = LoadSpec['grant']['limits']

export function runTierContract(t: Test, o: TierContractOptions): void {
  const name = o.label === undefined ? o.tier : `${o.tier} (${o.label})`
  const tp = o.platform
  let loads = 0

  /** A spec for `dir` with a kv namespace of its own, so kv assertions see only this load's keys. */
  const specFor = (dir: string, limits: Partial<Limits> = {}, log = tp.platform.logger): LoadSpec => {
    const l: Limits = { memoryMb: o.memoryMb ?? 32, timeoutMs: 2000, concurrency: 4, ...limits }
    const permissions = { net: [], kv: true, env: ['GREETING'] }
    return {
      dir,
      entry: join(dir, 'index.js'),
      manifest: { name: 'healthy', version: '1.0.0', entry: 'index.js', sandbox: o.tier, permissions, limits: l },
      grant: { sandbox: o.tier, permissions, limits: l },
      capabilities: { log, kv: kvNamespace(tp.platform.store, `${name}-${++loads}`), env: { GREETING: 'hi' } },
      metrics: tp.platform.metrics,
      ...o.spec
    }
  }
  const loaded = async (
    t: Test,
    limits: Partial<Limits> = {},
    log?: LoadSpec['capabilities']['log']
  ): Promise<SandboxInstance> => {
    const inst = await o.load(specFor(HEALTHY_FIXTURE, limits, log))
    t.teardown(() => inst.dispose())
    return inst
  }
  /** A plugin's own throw, as this tier hands it to the caller. */
  const threw = async (t: Test, p: Promise<unknown>, re: RegExp): Promise<void> => {
    if (o.wrapsThrows) {
      await rejects(t, p, 'threw', re)
      return
    }
    const err = await p.then(
      () => undefined,
      (e: unknown) => e
    )
    t.ok(err instanceof Error && err.name === 'Error', "the plugin's own Error")
    t.match((err as Error).message, re)
  }

  t.test(`${name}: loads the module graph and runs every contribution kind`, async (t) => {
    const inst = await loaded(t)
    t.equal(inst.kind, o.tier)
    t.ok(inst.descriptor.tools.some((x) => x.name === 'word_count' && x.description === 'Counts words'))
    t.same(await tool(inst, 'word_count', { text: 'one two  three' }), { words: 3 })
    t.equal(await tool(inst, 'add', { a: 2, b: 3 }), 5)
    t.same(await inst.invoke({ kind: 'resource', name: 'healthy://readme', args: { uri: 'healthy://readme' } }), {
      text: 'hi'
    })
    t.same(await inst.invoke({ kind: 'prompt', name: 'greet', args: { who: 'ann' } }), [
      { role: 'user', content: { type: 'text', text: 'hello ann' } }
    ])
    await threw(t, tool(inst, 'nope'), /unknown tool 'nope'/)
  })

  t.test(`${name}: a string result comes back exactly, whatever it looks like`, async (t) => {
    const inst = await loaded(t)
    for (const s of ['3', '', '"quoted"', '{"a":1}', '\u0001marked', 'line\nbreak \u0000 é 😀', '__proto__'])
      t.equal(await tool(inst, 'text', { s }), s, JSON.stringify(s))
    t.same(await tool(inst, 'text', { s: { __proto__: null, a: [1] } }), { a: [1] }, 'other values still as JSON')
  })

  t.test(
    `${name}: ctx carries progress, kv, env and log from the host grants, and no fetch without a grant`,
    async (t) => {
      const lines: Record<string, unknown>[] = []
      const log = pino(
        { level: 'debug' },
        new Writable({
          write(chunk, _enc, cb) {
            lines.push(JSON.parse(String(chunk)) as Record<string, unknown>)
            cb()
          }
        })
      )
      const inst = await loaded(t, {}, log)
      const seen: unknown[] = []
      t.same(await tool(inst, 'steps', { n: 3 }, { onProgress: (p: unknown) => seen.push(p) }), { done: 3 })
      t.same(
        seen,
        [
          { step: 1, of: 3 },
          { step: 2, of: 3 },
          { step: 3, of: 3 }
        ],
        'every progress message, in order, before the result'
      )
      t.same(
        await tool(inst, 'kv_roundtrip', { key: 'k1', value: { a: [1, 2] } }),
        { got: { a: [1, 2] }, keys: ['k1'] },
        'exactly the key in the plugin namespace'
      )
      t.same(await tool(inst, 'env'), { greeting: 'hi', hasFetch: false, hasKv: true })
      t.equal(await tool(inst, 'log'), true)
      // log lines are not part of a call's result (a worker sends them beside it), so they may land just after it
      t.match(
        await waitFor(() => lines.find((l) => l.msg === 'hello from the plugin'), 'the plugin log line'),
        { level: 30, n: 1 },
        'ctx.log reaches the host logger'
      )
    }
  )

  t.test(`${name}: ctx can be destructured`, async (t) => {
    const inst = await loaded(t)
    const got: unknown[] = []
    t.same(await tool(inst, 'destructure', {}, { onProgress: (p: unknown) => got.push(p) }), { kv: 1, aborted: false })
    t.same(got, [{ p: 1 }])
  })

  t.test(`${name}: arguments ${o.argsAsJson ? 'must be JSON' : 'are handed over as they are'}`, async (t) => {
    const inst = await loaded(t)
    if (o.argsAsJson) {
      try {
        await tool(inst, 'echo', { big: 1n })
        t.fail('BigInt args accepted')
      } catch (err) {
        t.match((err as Error).message, /arguments are not JSON/)
      }
    } else {
      const args = { big: 1n }
      t.equal(await tool(inst, 'echo', args), args, 'the same object, in the same process')
    }
  })

  t.test(`${name}: a call over its time limit fails with timeout and the instance keeps serving`, async (t) => {
    const inst = await loaded(t, { timeoutMs: 300 })
    if (o.stopsRunawayCode) {
      await rejects(t, tool(inst, 'loop'), 'timeout', o.timeoutMessage)
      t.equal(await tool(inst, 'add', { a: 1, b: 1 }), 2)
    }
    await rejects(t, tool(inst, 'sleep', { ms: 5000 }), 'timeout', o.timeoutMessage)
    t.equal(await tool(inst, 'add', { a: 2, b: 2 }), 4)
    const metrics = await (await fetch(tp.url + '/metrics')).text()
    const counted = /platform_plugin_failures_total\{plugin="healthy",reason="timeout"\} [1-9]/
    if (o.countsFailures) t.match(metrics, counted)
    else t.notMatch(metrics, counted, 'no sandbox died')
  })

  t.test(`${name}: cancelling through the signal fails the call, and the instance keeps serving`, async (t) => {
    const inst = await loaded(t)
    for (const [toolName, args] of [
      ['watch_abort', {}],
      ['sleep', { ms: 10_000 }]
    ] as const) {
      const ac = new AbortController()
      const p = tool(inst, toolName, args, { signal: ac.signal })
      setTimeout(() => ac.abort(), 50)
      await rejects(t, p, 'cancelled', /cancelled/)
      t.equal(await tool(inst, 'add', { a: 1, b: 2 }), 3)
    }
    const ac = new AbortController()
    ac.abort()
    await rejects(t, tool(inst, 'add', { a: 1, b: 2 }, { signal: ac.signal }), 'cancelled', /cancelled/)
  })

  t.test(`${name}: calls beyond the concurrency limit queue`, async (t) => {
    const inst = await loaded(t, { concurrency: 2 })
    const rs = await Promise.all(
      Array.from({ length: 6 }, () => tool(inst, 'active', { ms: 20 }) as Promise<{ maxActive: number }>)
    )
    const most = Math.max(...rs.map((r) => r.maxActive))
    // worker: a thread runs one call at a time and counts only its own, so it sees exactly one
    t.equal(most, o.sharesModuleState ? 2 : 1)
  })

  t.test(`${name}: load errors name the problem`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), `tier-${o.tier}-`))
    t.teardown(() => {
      rmSync(dir, { recursive: true, force: true })
    })
    const cases: [string, string, RegExp][] = [
      // the inline tier imports in the test process, where tsx parses first (esbuild's Parse error)
      ['syntax', 'export default {', /SyntaxError|Parse error/],
      ['not-plugin', 'export default 42', /definePlugin/],
      ['throws', 'throw new Error("boom at load")', /boom at load/]
    ]
    for (const [folder, code, re] of cases) {
      mkdirSync(join(dir, folder))
      writeFileSync(join(dir, folder, 'index.js'), code)
      // `<name>: <message>`: inline rejects with the engine's own SyntaxError, the sandboxes name it in the message
      const err = await o.load(specFor(join(dir, folder))).then(
        async (inst) => {
          await inst.dispose()
          return 'loaded'
        },
        (e: unknown) => String(e)
      )
      t.match(err, re, folder)
    }
    await t.rejects(o.load(specFor(join(dir, 'missing'))), o.missingEntry, 'missing entry')
  })
}
