/**
 * "No module singletons" (docs/architecture.md): state lives in an area's service, provided under
 * its key, or is passed in. A runtime file's top-level `let`/`var`, or a top-level collection or
 * literal that the file changes, is shared by every Platform in the process; the few that must be
 * are listed below, each with why.
 */
import t from 'tap'
import ts from 'typescript'
import { parse, rel, runtimeFiles } from './import-graph.js'
import { moduleState } from './module-state.js'

/** `file#name` -> why this module-level state is right where it is. */
const ALLOWED = new Map([
  // caches of a pure function: the same input gives the same output whichever platform asks
  ['runtime/contracts/iso-now.ts#isoMs', "the clock's ISO string, formatted once per millisecond"],
  ['runtime/contracts/iso-now.ts#iso', "the clock's ISO string, formatted once per millisecond"],
  ['runtime/contracts/iso-now.ts#second', "the clock's second, formatted once per second"],
  ['runtime/contracts/iso-now.ts#secondText', "the clock's second, formatted once per second"],
  ['runtime/scope/preamble.ts#candidatesOf', "a frozen policy list's scope candidates, kept for the last list"],
  ['runtime/scope/preamble.ts#candidates', "a frozen policy list's scope candidates, kept for the last list"],
  ['runtime/governance/audit-entry.ts#clientKeys', 'client metadata keys with their prefix, keyed by the key'],
  ['runtime/http/context.ts#ENCODED', 'header values encoded once, keyed by the value'],
  ['runtime/http/status.ts#LINES', 'the status lines of node:http, encoded once at load'],
  ['runtime/admin/event-json.ts#keys', 'JSON-quoted field names, keyed by the name'],
  [
    'runtime/admin/cluster-nodes.ts#lastText',
    "a pure digest's last input and output: it changes with the configuration"
  ],
  [
    'runtime/admin/cluster-nodes.ts#lastDigest',
    "a pure digest's last input and output: it changes with the configuration"
  ],
  ['runtime/interactions/stream-session.ts#lastStep', 'the last step serialised, so subscribers share it'],
  ['runtime/interactions/stream-session.ts#lastFrame', 'the last step serialised, so subscribers share it'],
  ['runtime/observability/logger.ts#boundOf', "a logger's bindings, keyed weakly by the logger"],
  ['runtime/plugins/inline.ts#logs', "a plugin's ctx.log, keyed weakly by its capabilities"],
  ['runtime/scope/llm-classifier.ts#questions', 'the question of a frozen scope config, keyed weakly by it'],
  ['runtime/scope/rule-based.ts#prepared', 'the probes of a frozen scope config, keyed weakly by it'],
  ['runtime/plugins/isolate/module-resolver.ts#sdkSource', "the sdk's source text, read once per process"],
  ['runtime/openai/response-format.ts#metaAjv', 'the JSON Schema meta-schemas, compiled once at the first schema'],
  // the process's own: one per process or thread whatever runs in it
  ['runtime/http/context.ts#idSeq', 'minted request ids count per process, so they stay unique across platforms'],
  ['runtime/http/context.ts#target', "scratch of uWS's synchronous header callback, reset on every request"],
  ['runtime/ai/text-batch.ts#dirty', "batches waiting for the end of the event loop's pass, one loop per thread"],
  ['runtime/plugins/isolate/pool.ts#pools', 'sandbox processes are shared by every host in the process'],
  [
    'runtime/plugins/isolate/watchdog.ts#shared',
    'isolates entered from one thread never run at once: one watcher per thread'
  ],
  ['runtime/plugins/module-hooks.ts#registered', 'module hooks are registered once per thread'],
  ['runtime/plugins/module-hooks.ts#loads', 'tags plugin entry URLs uniquely within the thread'],
  ['runtime/plugins/worker/sdk-hooks.ts#sdkUrl', "a worker thread's module hook, one per thread"],
  ['runtime/scope/system-properties.ts#g', 'the property table is one per process by design (docs/scope.md rule 4)'],
  [
    'runtime/scope/system-properties.ts#props',
    'the property table is one per process by design (docs/scope.md rule 4)'
  ],
  ['runtime/plugins/worker/worker-task.ts#starts', "a plugin worker thread's entry, one per thread"],
  ['runtime/plugins/worker/worker-task.ts#channel', "a plugin worker thread's entry, one per thread"],
  ['runtime/plugins/worker/worker-task.ts#waiting', "a plugin worker thread's entry, one per thread"],
  ['runtime/plugins/worker/worker-task.ts#nextCap', "a plugin worker thread's entry, one per thread"],
  ['runtime/plugins/worker/worker-task.ts#plugin', "a plugin worker thread's entry, one per thread"],
  ['runtime/plugins/worker/worker-task.ts#loaded', "a plugin worker thread's entry, one per thread"],
  ['runtime/plugins/isolate/sandbox-process.ts#out', "the sandbox child process's entry, one per process"],
  ['runtime/plugins/isolate/sandbox-process.ts#runners', "the sandbox child process's entry, one per process"],
  ['runtime/plugins/isolate/sandbox-process.ts#marked', "the sandbox child process's entry, one per process"]
])

t.test('the checker finds module state and leaves constant tables alone', async (t) => {
  const sample = [
    'let n = 0',
    'var v = 1',
    'const TABLE = new Set(["a"])',
    'export const OPEN = new Map<string, number>()',
    'export const CLOSED: ReadonlySet<string> = new Set(["b"])',
    'const cache = new Map<string, number>()',
    'const list: string[] = []',
    'const conf = { a: 1 }',
    'const ajv = new Ajv()',
    'const table = globalThis.table ??= new Map()',
    'export function f(k: string) { cache.set(k, 1); list.push(k); conf.a = 2; table.set(k, 1); return TABLE.has(k) }'
  ].join('\n')
  const got = moduleState(ts.createSourceFile('x.ts', sample, ts.ScriptTarget.Latest, true))
  t.same(
    got.map((m) => `${m.name}: ${m.why}`),
    [
      'n: let',
      'v: var',
      'OPEN: exported Map',
      'cache: changed at line 11: cache.set(k, 1)',
      'list: changed at line 11: list.push(k)',
      'conf: changed at line 11: conf.a = 2',
      'table: changed at line 11: table.set(k, 1)'
    ]
  )
})

t.test('no module singletons in runtime/ (state belongs to a service, or is passed in)', async (t) => {
  const bad: string[] = []
  const seen = new Set<string>()
  for (const f of runtimeFiles()) {
    for (const m of moduleState(parse(f))) {
      const key = `${rel(f)}#${m.name}`
      seen.add(key)
      if (ALLOWED.has(key)) continue
      bad.push(
        `${rel(f)}:${m.line}: '${m.name}' is module state (${m.why}), shared by every platform in the process; keep it in the area's service or pass it in (or type a constant table Readonly)`
      )
    }
  }
  for (const key of ALLOWED.keys())
    if (!seen.has(key)) bad.push(`${key}: allowed but no longer module state; drop the entry`)
  t.same(bad, [], bad.join('\n'))
})
