import { Worker } from 'node:worker_threads'
import type { WorkerCommand, WorkerEvent } from './ws-worker.js'
import { HIST_BUCKETS, histPercentile } from './stats.js'

export interface WsLoadOptions {
  /** ws:// or http:// URL of the WebSocket endpoint (path included). */
  url: string
  connections: number
  /** Worker threads holding the connections (default 2: one per core of a small box). */
  threads?: number
  /** Source addresses to spread connections over (default 127.0.0.1..4; each gives ~28k ports). */
  sourceAddrs?: string[]
  /** Connection attempts in flight per worker. */
  concurrency?: number
  /** With `{group}` in the URL path: connections per group (one room each). */
  groupSize?: number
  /**
   * false: every connection receives, none sends; another load's sender sends to these too (a
   * room spread over several servers, `burst`'s `also`). Default true.
   */
  sends?: boolean
}

export interface WsStats {
  deliveries: number
  otherFrames: number
  closed: number
  p50Us: number
  p99Us: number
}

/**
 * Many WebSocket clients spread over worker threads. The first connection of worker 0 is the
 * sender of broadcast bursts; every other connection is a counted receiver.
 */
export class WsLoad {
  private readonly workers: Worker[] = []
  private readonly shares: number[] = []
  private seq = 0

  private constructor(readonly opts: WsLoadOptions) {}

  static async open(opts: WsLoadOptions): Promise<{ load: WsLoad; ok: number; failed: number; error?: string }> {
    const l = new WsLoad(opts)
    const r = await l.connect()
    return { load: l, ...r }
  }

  private async connect(): Promise<{ ok: number; failed: number; error?: string }> {
    const u = new URL(this.opts.url)
    const threads = Math.max(1, Math.min(this.opts.threads ?? 2, this.opts.connections))
    const sourceAddrs = this.opts.sourceAddrs ?? ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']
    let offset = 0
    for (let t = 0; t < threads; t++) {
      const share = Math.floor(this.opts.connections / threads) + (t < this.opts.connections % threads ? 1 : 0)
      this.shares.push(share)
      const w = new Worker(new URL('./ws-worker.js', import.meta.url), {
        workerData: {
          host: u.hostname,
          port: Number(u.port),
          path: decodeURI(u.pathname) + u.search,
          groupSize: this.opts.groupSize ?? Number.MAX_SAFE_INTEGER,
          offset,
          sourceAddrs,
          sender: t === 0 && this.opts.sends !== false
        }
      })
      offset += share
      w.unref()
      this.workers.push(w)
    }
    const rs = await Promise.all(
      this.workers.map((w, t) =>
        this.ask(w, { cmd: 'connect', count: this.shares[t]!, concurrency: this.opts.concurrency ?? 256 }, 'connected')
      )
    )
    const ok = rs.reduce((a, r) => a + r.ok, 0)
    const failed = rs.reduce((a, r) => a + r.failed, 0)
    const error = rs.find((r) => r.error !== undefined)?.error
    return { ok, failed, ...(error !== undefined ? { error } : {}) }
  }

  /**
   * Sends `count` bench frames from the sender and resolves when every receiver got the last one,
   * the receivers of the loads in `also` included (members of the same room on other servers).
   */
  async burst(count: number, pad: number, timeoutMs = 10_000, also: WsLoad[] = []): Promise<boolean> {
    const last = this.seq + count - 1
    const reached = Promise.all(
      [this, ...also].flatMap((l) => l.workers.map((w) => l.ask(w, { cmd: 'arm', seq: last }, 'reached')))
    )
    this.workers[0]!.postMessage({ cmd: 'send', count, seqStart: this.seq, pad } satisfies WorkerCommand)
    this.seq += count
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => {
        resolve(false)
      }, timeoutMs)
    })
    const ok = await Promise.race([reached.then(() => true), timeout])
    clearTimeout(timer)
    return ok
  }

  /** Deliveries and latency percentiles since the last reset. */
  async stats(reset = true): Promise<WsStats> {
    const rs = await Promise.all(this.workers.map((w) => this.ask(w, { cmd: 'stats', reset }, 'stats')))
    const hist = new Uint32Array(HIST_BUCKETS)
    for (const r of rs) for (let i = 0; i < HIST_BUCKETS; i++) hist[i]! += r.hist[i]!
    return {
      deliveries: rs.reduce((a, r) => a + r.deliveries, 0),
      otherFrames: rs.reduce((a, r) => a + r.otherFrames, 0),
      closed: rs.reduce((a, r) => a + r.closed, 0),
      p50Us: histPercentile(hist, 50),
      p99Us: histPercentile(hist, 99)
    }
  }

  /** Waits until no non-bench frame (join/leave announcements) arrived for `quietMs`. */
  async settle(quietMs = 500, maxMs = 60_000): Promise<void> {
    const end = Date.now() + maxMs
    while (Date.now() < end) {
      const before = (await this.stats(false)).otherFrames
      await new Promise((resolve) => {
        setTimeout(resolve, quietMs)
      })
      if ((await this.stats(false)).otherFrames === before) return
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => this.ask(w, { cmd: 'close' }, 'closed').catch(() => undefined)))
    await Promise.all(this.workers.map((w) => w.terminate()))
  }

  private ask<E extends WorkerEvent['ev']>(
    w: Worker,
    cmd: WorkerCommand,
    ev: E
  ): Promise<Extract<WorkerEvent, { ev: E }>> {
    return new Promise((resolve, reject) => {
      const onMsg = (m: WorkerEvent) => {
        if (m.ev !== ev) return
        // a late 'reached' of an earlier (timed-out) burst must not complete this one
        if (m.ev === 'reached' && cmd.cmd === 'arm' && m.seq !== cmd.seq) return
        w.off('message', onMsg)
        w.off('error', onErr)
        resolve(m as Extract<WorkerEvent, { ev: E }>)
      }
      const onErr = (e: Error) => {
        w.off('message', onMsg)
        reject(e)
      }
      w.on('message', onMsg)
      w.once('error', onErr)
      w.postMessage(cmd)
    })
  }
}
