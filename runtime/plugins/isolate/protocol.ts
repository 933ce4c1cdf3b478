import type { FailReason, IsolateLoadData } from './isolate-core.js'

/**
 * Supervisor -> sandbox process. A process hosts the isolates of several plugins: `s` is the slot
 * of the plugin instance a message is for. `args` is JSON text ('' for none).
 */
export type ToChild =
  | { t: 'load'; s: number; data: IsolateLoadData }
  | { t: 'unload'; s: number }
  | { t: 'call'; s: number; id: number; kind: string; name: string; args: string }
  | { t: 'cap'; s: number; capId: number; ok: boolean; json: string }
  | { t: 'abort'; s: number; id: number; message: string }

/** Sandbox process -> supervisor, tagged with the slot it comes from. */
export type ToParent =
  | { t: 'loaded'; s: number; descriptor: unknown }
  | { t: 'load-failed'; s: number; message: string }
  | { t: 'result'; s: number; id: number; json: string }
  | { t: 'failed'; s: number; id: number; reason: FailReason; message: string }
  | { t: 'progress'; s: number; id: number; json: string }
  | { t: 'cap'; s: number; capId: number; id: number; op: string; args: string }
  | { t: 'log'; s: number; level: string; msg: string; data: string }
  | { t: 'died'; s: number; reason: FailReason; message: string }
  | { t: 'aborted'; s: number; id: number }

/**
 * The sandbox process's file descriptor of its crash marker: a 4-byte file where it writes the slot
 * whose isolate it is about to enter (only when that slot changes). A process killed by V8 inside
 * an isolate cannot say who did it; the supervisor reads the marker after the death instead.
 */
export const MARK_FD = 4

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

  constructor(private readonly sendBatch: (b: M[]) => void) {}

  push(m: M): void {
    if (this.batch.push(m) === 1) queueMicrotask(this.flush)
  }
}
