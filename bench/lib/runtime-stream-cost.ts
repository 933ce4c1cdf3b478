import { join } from 'node:path'
import { RuntimeStreams, type LoadSpec, type SandboxInstance, type SandboxKind } from '../../runtime/plugins/index.js'

/** What one stream event costs: wall and this process's CPU (all its threads), µs per event. */
export interface EventCost {
  wallUs: number
  cpuUs: number
}

const PLUGIN = 'bench-echo'

/**
 * The bench-echo plugin (a runtime yielding `message` short text deltas) loaded in `tier`, with the
 * host side of runtime streams wired as the platform wires it.
 */
export function streamSpec(
  root: string,
  tier: SandboxKind,
  streams: RuntimeStreams,
  log: LoadSpec['capabilities']['log'],
  isolation?: 'process' | 'in-process'
): LoadSpec {
  const dir = join(root, 'bench/plugins', PLUGIN)
  const limits = { memoryMb: 64, timeoutMs: 60_000, concurrency: 4 }
  const permissions = { net: [], kv: false, env: [] }
  return {
    dir,
    entry: join(dir, 'index.js'),
    manifest: { name: PLUGIN, version: '1.0.0', entry: 'index.js', sandbox: tier, permissions, limits },
    grant: { sandbox: tier, permissions, limits },
    capabilities: { log, runtime: (op, args) => streams.call(PLUGIN, op, args) },
    ...(isolation !== undefined ? { isolation } : {}),
    isolatePool: { processes: 0, pluginsPerProcess: 1 }
  }
}

/**
 * `rounds` streams of `events` deltas each, read as the plugin yields them (`streamed`) and the
 * same events returned as one array when the plugin ends (`batch`, how runtimes worked before).
 */
export async function streamCost(
  inst: SandboxInstance,
  streams: RuntimeStreams,
  events: number,
  rounds: number
): Promise<{ streamed: EventCost; batch: EventCost }> {
  const request = { message: String(events) }
  const streamed = async (): Promise<number> => {
    let n = 0
    const s = streams.begin(PLUGIN, (stream, o) =>
      inst.invoke({ kind: 'runtime', name: 'bench-stream', args: { request, stream } }, o)
    )
    for await (const _ of s) n++
    return n
  }
  const batch = async (): Promise<number> => {
    const out = (await inst.invoke({ kind: 'runtime', name: 'bench-stream', args: { request } })) as unknown[]
    let n = 0
    for (const _ of out) n++
    return n
  }
  const measure = async (fn: () => Promise<number>): Promise<EventCost> => {
    await fn() // warm-up
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    let n = 0
    for (let r = 0; r < rounds; r++) n += await fn()
    const wallUs = (performance.now() - t0) * 1000
    const c = process.cpuUsage(c0)
    const cpuUs = c.user + c.system
    if (n !== (events + 1) * rounds) throw new Error(`${n} events read, expected ${(events + 1) * rounds}`)
    return { wallUs: wallUs / n, cpuUs: cpuUs / n }
  }
  return { streamed: await measure(streamed), batch: await measure(batch) }
}
