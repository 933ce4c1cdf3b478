import { Worker } from 'node:worker_threads'
import type { AgentWorkerCommand, AgentWorkerEvent, AgentWorkerInit } from './agent-worker.js'

export interface TurnsResult {
  ok: number
  failed: number
  /** text deltas received by all clients */
  tokens: number
  /** the fewest deltas one successful client received */
  minTokens: number
  /** the reply of one client, deltas joined */
  text: string
  error?: string
}

/**
 * Agent-turn clients spread over worker threads (bench/lib/agent-worker.ts): `turns` runs many
 * clients at once, each sending one prompt and reading the whole streamed reply; `hold` opens
 * WebSocket sessions that each finish one turn and then stay connected until `release`.
 * `responses`: `POST /v1/responses` with `stream: true`, as `model` with the bearer `token`.
 */
export class AgentLoad {
  private readonly workers: Worker[]

  constructor(
    mode: AgentWorkerInit['mode'],
    url: string,
    threads = 2,
    responses: Pick<AgentWorkerInit, 'model' | 'token'> = {}
  ) {
    this.workers = Array.from({ length: threads }, () => {
      const workerData: AgentWorkerInit = { mode, url, ...responses }
      const w = new Worker(new URL('./agent-worker.js', import.meta.url), { workerData })
      w.unref()
      return w
    })
  }

  private split(count: number): number[] {
    const n = this.workers.length
    return this.workers.map((_, t) => Math.floor(count / n) + (t < count % n ? 1 : 0))
  }

  /** `count` clients at once (at most `concurrency` in flight), each one turn on its own connection. */
  async turns(count: number, message: string, concurrency = count): Promise<TurnsResult> {
    const shares = this.split(count)
    const per = this.split(concurrency)
    const rs = await Promise.all(
      this.workers.map((w, t) =>
        this.ask(w, { cmd: 'turns', count: shares[t]!, message, concurrency: Math.max(1, per[t]!) }, 'turns')
      )
    )
    const ok = rs.filter((r) => r.ok > 0)
    const error = rs.find((r) => r.error !== undefined)?.error
    return {
      ok: rs.reduce((a, r) => a + r.ok, 0),
      failed: rs.reduce((a, r) => a + r.failed, 0),
      tokens: rs.reduce((a, r) => a + r.tokens, 0),
      minTokens: ok.length === 0 ? 0 : Math.min(...ok.map((r) => r.minTokens)),
      text: rs[0]?.text ?? '',
      ...(error !== undefined ? { error } : {})
    }
  }

  /** Opens `count` WebSocket sessions that each complete one turn and stay open. */
  async hold(
    count: number,
    message: string,
    concurrency = 128
  ): Promise<{ ok: number; failed: number; error?: string }> {
    const shares = this.split(count)
    const rs = await Promise.all(
      this.workers.map((w, t) =>
        this.ask(
          w,
          { cmd: 'hold', count: shares[t]!, message, concurrency: Math.ceil(concurrency / this.workers.length) },
          'held'
        )
      )
    )
    const error = rs.find((r) => r.error !== undefined)?.error
    return {
      ok: rs.reduce((a, r) => a + r.ok, 0),
      failed: rs.reduce((a, r) => a + r.failed, 0),
      ...(error !== undefined ? { error } : {})
    }
  }

  /** Closes the held sessions; returns how many were still open. */
  async release(): Promise<number> {
    const rs = await Promise.all(this.workers.map((w) => this.ask(w, { cmd: 'release' }, 'released')))
    return rs.reduce((a, r) => a + r.open, 0)
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()))
  }

  private ask<E extends AgentWorkerEvent['ev']>(
    w: Worker,
    cmd: AgentWorkerCommand,
    ev: E
  ): Promise<Extract<AgentWorkerEvent, { ev: E }>> {
    return new Promise((resolve, reject) => {
      const onMsg = (m: AgentWorkerEvent) => {
        if (m.ev !== ev) return
        w.off('message', onMsg)
        w.off('error', onErr)
        resolve(m as Extract<AgentWorkerEvent, { ev: E }>)
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
