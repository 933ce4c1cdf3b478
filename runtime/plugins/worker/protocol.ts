/**
 * What the worker tells the host during call `id`, on the pool's BroadcastChannel
 * (log lines carry id 0 and are not counted).
 */
export type WorkerToHost =
  | { id: number; t: 'progress'; json: string }
  | { id: number; t: 'log'; level: string; msg: string; data: string }
  | { id: number; t: 'cap'; capId: number; op: string; args: string }

/** The host's answer to a capability request of call `id`. */
export interface CapReply {
  id: number
  capId: number
  ok: boolean
  json: string
}

/** Data every thread of a plugin's pool starts with. */
export interface WorkerData {
  name: string
  entry: string
  sdk: string
  hooks: string
  loadId: string
  /** BroadcastChannel name shared by the host and the pool's threads. */
  channel: string
  /** Float64Array slots: when the call in each slot started running (ms since epoch), 0 while queued. */
  starts: SharedArrayBuffer
  maxResultBytes: number
  /** How long an idle thread watches for the next call before it sleeps (µs; 0: it sleeps at once). */
  spinUs: number
  grants: { kv: boolean; fetch: boolean; env?: Record<string, string> }
}

/**
 * One call, handed to piscina as one string, `<id>,<slot>,<kind length>,<name length>,<kind><name><args>`:
 * a string crosses the thread boundary cheaper than an object, whose keys are cloned and interned per call.
 * `args` is JSON text ('' for none). The task resolves with `<status><sent>:<payload>`:
 * status 0 JSON result, 1 threw, 2 invalid result; `sent` counts the messages the call posted, so
 * the host settles only after all of them arrived.
 */
export interface WorkerTask {
  id: number
  slot: number
  kind: string
  name: string
  args: string
}

export function encodeTask(id: number, slot: number, kind: string, name: string, args: string): string {
  return `${id},${slot},${kind.length},${name.length},${kind}${name}${args}`
}

export function decodeTask(s: string): WorkerTask {
  const a = s.indexOf(',')
  const b = s.indexOf(',', a + 1)
  const c = s.indexOf(',', b + 1)
  const d = s.indexOf(',', c + 1)
  const kindEnd = d + 1 + Number(s.slice(b + 1, c))
  const nameEnd = kindEnd + Number(s.slice(c + 1, d))
  return {
    id: Number(s.slice(0, a)),
    slot: Number(s.slice(a + 1, b)),
    kind: s.slice(d + 1, kindEnd),
    name: s.slice(kindEnd, nameEnd),
    args: s.slice(nameEnd)
  }
}
