import type { FailReason, IsolateLoadData } from './isolate-core.js'

/** Supervisor -> sandbox process. `args` is JSON text ('' for none). */
export type ToChild =
  | { t: 'load', data: IsolateLoadData }
  | { t: 'call', id: number, kind: string, name: string, args: string }
  | { t: 'cap', capId: number, ok: boolean, json: string }
  | { t: 'abort', id: number, message: string }

/** Sandbox process -> supervisor. */
export type ToParent =
  | { t: 'loaded', descriptor: unknown }
  | { t: 'load-failed', message: string }
  | { t: 'result', id: number, json: string }
  | { t: 'failed', id: number, reason: FailReason, message: string }
  | { t: 'progress', id: number, json: string }
  | { t: 'cap', capId: number, id: number, op: string, args: string }
  | { t: 'log', level: string, msg: string, data: string }
  | { t: 'died', reason: FailReason, message: string }
  | { t: 'aborted', id: number }
