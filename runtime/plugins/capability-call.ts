import type { Capabilities } from './contract.js'

/** Runs one capability request from plugin code against the host-side capabilities; resolves with JSON text. */
export async function runCapability(caps: Capabilities, op: string, argsJson: string): Promise<string> {
  const args = JSON.parse(argsJson) as unknown[]
  if (!Array.isArray(args)) throw new Error('bad capability request')
  let r: unknown
  if (op.startsWith('runtime.')) {
    if (caps.runtime === undefined) throw new Error('runtime streams are not available to this plugin')
    r = await caps.runtime(op, args)
  } else if (op.startsWith('agent.')) {
    if (caps.agent === undefined) throw new Error('agent host calls are not available to this plugin')
    r = await caps.agent(op, args)
  } else if (op === 'fetch') {
    if (caps.fetch === undefined) throw new Error('fetch is not granted to this plugin')
    const init = (args[1] ?? {}) as { method?: unknown; headers?: unknown; body?: unknown }
    const clean: { method?: string; headers?: Record<string, string>; body?: string } = {}
    if (typeof init.method === 'string') clean.method = init.method
    if (init.headers !== null && typeof init.headers === 'object')
      clean.headers = Object.fromEntries(Object.entries(init.headers as object).map(([k, v]) => [k, String(v)]))
    if (typeof init.body === 'string') clean.body = init.body
    r = await caps.fetch(String(args[0]), clean)
  } else {
    const kv = caps.kv
    if (kv === undefined) throw new Error('kv is not granted to this plugin')
    switch (op) {
      case 'kv.get':
        r = await kv.get(String(args[0]))
        break
      case 'kv.put':
        await kv.put(String(args[0]), args[1])
        r = undefined
        break
      case 'kv.delete':
        r = await kv.delete(String(args[0]))
        break
      case 'kv.list':
        r = await kv.list(String(args[0] ?? ''))
        break
      default:
        throw new Error(`unknown capability '${op}'`)
    }
  }
  return r === undefined ? '' : JSON.stringify(r)
}
