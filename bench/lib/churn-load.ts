import { Worker } from 'node:worker_threads'
import type { ChurnCommand, ChurnEvent, ChurnInit } from './churn-worker.js'
import { askWorker } from './worker-ask.js'

export interface ChurnCounts {
  /** Members that joined (got their 101) and were dropped: one join and one leave each. */
  joined: number
  refused: number
  failed: number
}

/** Room churn paced at a rate of joins+leaves per second, from a worker thread (see churn-worker.ts). */
export class ChurnLoad {
  private readonly worker: Worker

  constructor(opts: {
    url: string
    rooms: number
    rate: number
    maxInFlight?: number
    /** Joins to make in all (default: until stopped). */
    total?: number
    sourceAddrs?: string[]
  }) {
    const u = new URL(opts.url)
    this.worker = new Worker(new URL('./churn-worker.js', import.meta.url), {
      workerData: {
        host: u.hostname,
        port: Number(u.port),
        path: decodeURI(u.pathname) + u.search,
        rooms: opts.rooms,
        rate: opts.rate,
        maxInFlight: opts.maxInFlight ?? 400,
        total: opts.total ?? 0,
        sourceAddrs: opts.sourceAddrs ?? ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']
      } satisfies ChurnInit
    })
    this.worker.unref()
  }

  counts(): Promise<ChurnCounts> {
    return this.ask({ cmd: 'stats' })
  }

  /** With a total: resolves once every join was made or failed (or `maxMs` passed), polling every 20 ms. */
  async finished(total: number, maxMs = 120_000): Promise<ChurnCounts> {
    const end = performance.now() + maxMs
    for (;;) {
      const c = await this.counts()
      if (c.joined + c.refused + c.failed >= total || performance.now() > end) return c
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  /** Stops starting connections, waits for those in flight, and returns the totals. */
  async stop(): Promise<ChurnCounts> {
    let s = await this.ask({ cmd: 'stop' })
    for (let i = 0; i < 100 && s.inFlight > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      s = await this.ask({ cmd: 'stats' })
    }
    await this.worker.terminate()
    return s
  }

  private ask(cmd: ChurnCommand): Promise<ChurnEvent> {
    return askWorker(this.worker, cmd)
  }
}
