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

/** Messages travel in batches: everything produced in one turn of the event loop goes in one IPC send. */
export type Batch<M> = M[]

/** Collects messages and sends them as one batch at the end of the current microtask queue. */
export class Batcher<M> {
  private batch: M[] = []
  private readonly flush = (): void => {
    const b = this.batch
    this.batch = []
    this.sendBatch(b)
  }

  constructor (private readonly sendBatch: (b: M[]) => void) {}

  push (m: M): void {
    if (this.batch.push(m) === 1) queueMicrotask(this.flush)
  }
}
