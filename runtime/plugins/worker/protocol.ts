import type { MessagePort } from 'node:worker_threads'

/** What the worker tells the host during one call, over that call's MessagePort. */
export type WorkerToHost =
  | { t: 'start' }
  | { t: 'progress', json: string }
  | { t: 'log', level: string, msg: string, data: string }
  | { t: 'cap', capId: number, op: string, args: string }

/** The host's answer to a capability request. */
export interface CapReply { t: 'cap', capId: number, ok: boolean, json: string }

/** Data every thread of a plugin's pool starts with. */
export interface WorkerData {
  name: string
  entry: string
  sdk: string
  hooks: string
  loadId: string
  maxResultBytes: number
  grants: { kv: boolean, fetch: boolean, env?: Record<string, string> }
}

/** One call: `args` is JSON text ('' for none). The task resolves with `<status><payload>`: 0 JSON result, 1 threw, 2 invalid result. */
export interface WorkerTask { kind: string, name: string, args: string, port: MessagePort }
