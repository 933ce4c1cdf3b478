import { Worker } from 'node:worker_threads'
import type { SubscriberCommand, SubscriberEvent, SubscriberInit } from './event-subscriber-worker.js'
import { askWorker } from './worker-ask.js'

type Stats = Extract<SubscriberEvent, { ev: 'stats' }>

/** `count` WebSocket subscribers of a seq-numbered event stream in a worker thread (event-subscriber-worker.ts). */
export class EventSubscribers {
  private constructor(private readonly worker: Worker) {}

  static async open(url: string, count: number): Promise<EventSubscribers> {
    const u = new URL(url)
    const worker = new Worker(new URL('./event-subscriber-worker.js', import.meta.url), {
      workerData: {
        host: u.hostname,
        port: Number(u.port),
        path: u.pathname + u.search,
        count
      } satisfies SubscriberInit
    })
    worker.unref()
    const opened = await new Promise<Extract<SubscriberEvent, { ev: 'open' }>>((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
    })
    if (opened.ok < count) {
      await worker.terminate()
      throw new Error(`${opened.ok}/${count} event subscribers connected: ${opened.error ?? ''}`)
    }
    return new EventSubscribers(worker)
  }

  /** Events, frames and bytes received so far by all subscribers, and how many the server closed. */
  stats(): Promise<Stats> {
    return this.ask({ cmd: 'stats' }) as Promise<Stats>
  }

  async close(): Promise<void> {
    await this.ask({ cmd: 'close' }).catch(() => undefined)
    await this.worker.terminate()
  }

  private ask(cmd: SubscriberCommand): Promise<SubscriberEvent> {
    return askWorker(this.worker, cmd)
  }
}
