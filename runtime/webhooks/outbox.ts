/**
 * The durable outbox every webhook goes through. A delivery is written to LMDB before `enqueue`
 * resolves, and leaves it only when its receiver answered 2xx or its attempts ran out (it is then
 * kept, bounded, among the failures the admin lists): a process killed at any point redelivers,
 * after its restart, everything not yet acknowledged, under the same `webhook-id` (receivers
 * deduplicate on it). A delivery may also be *held*: written now, its body given later by
 * `release`, so a webhook promised to a client survives a crash before its payload exists.
 *
 * Deliveries of one queue (one receiver of one task or interaction) go out in the order they were
 * queued, each after the one before it is delivered or given up; retries wait with exponential
 * backoff and jitter, or the receiver's Retry-After. The outbox is bounded per owner and in total.
 */
import { randomUUID } from 'node:crypto'
import type { Database } from 'lmdb'
import type { Logger } from '../observability/index.js'
import { PlatformError } from '../contracts/index.js'
import { WEBHOOKS_ERRORS } from './errors.js'
import type { AttemptResult } from './delivery-attempt.js'

/** One delivery as LMDB keeps it (key: its seq, the order it was queued in). */
export interface StoredDelivery {
  id: string
  seq: number
  /** Whom it is counted against: a principal, or `anonymous <address>`. */
  owner: string
  /** The area that queued it (`a2a`, `interactions`) and what it is about (a task or interaction id). */
  source: string
  ref: string
  /** Deliveries of one queue go out one after the other, in seq order. */
  queue: string
  url: string
  /** Headers the receiver asked for (its token): never shown by the admin. */
  headers: Record<string, string>
  /** Null while held. */
  body: string | null
  createdAt: number
  attempts: number
  nextAt: number
  last?: AttemptRecord
}

export interface AttemptRecord {
  at: number
  status?: number
  error?: string
}

/** A failure kept for the admin: the delivery without its body and headers. */
export type FailedDelivery = Omit<StoredDelivery, 'body' | 'headers'> & { failedAt: number }

/** What the outbox keeps in memory of a delivery: everything but the body and headers, read from LMDB when sent. */
type Entry = Omit<StoredDelivery, 'body' | 'headers'> & { held: boolean }

export interface NewDelivery {
  owner: string
  source: string
  ref: string
  url: string
  headers?: Record<string, string>
  /** Defaults to one queue per source, ref and URL. */
  queue?: string
}

export interface OutboxOptions {
  db: Database<StoredDelivery, number>
  failures: Database<FailedDelivery, number>
  logger: Logger
  limits: { total: number; perOwner: number }
  retry: { maxAttempts: number; baseMs: number; maxMs: number }
  concurrency: number
  failuresKept: number
  /** Sends one attempt: signs and posts it. */
  send: (d: StoredDelivery, body: string, signal: AbortSignal) => Promise<AttemptResult>
  now?: () => number
  random?: () => number
}

export interface OutboxStats {
  pending: number
  held: number
  inFlight: number
  delivered: number
  failed: number
}

export class Outbox {
  private readonly entries = new Map<number, Entry>()
  private readonly byId = new Map<string, number>()
  private readonly queues = new Map<string, number[]>()
  private readonly owners = new Map<string, number>()
  private readonly inFlight = new Map<number, Promise<void>>()
  /** Deliveries counted already whose first write has not landed: not sent before they are durable. */
  private readonly writing = new Set<number>()
  private readonly abort = new AbortController()
  private timer: NodeJS.Timeout | undefined
  private timerAt = Infinity
  private seq = 0
  private failedSeq = 0
  private delivered = 0
  private failed = 0
  private closed = false
  private readonly now: () => number
  private readonly random: () => number

  constructor(private readonly o: OutboxOptions) {
    this.now = o.now ?? Date.now
    this.random = o.random ?? Math.random
    // what a killed process left: every delivery not yet acknowledged goes out again
    for (const { key, value } of o.db.getRange()) {
      this.seq = Math.max(this.seq, key)
      this.track(entryOf(value))
    }
    for (const key of o.failures.getKeys({ reverse: true, limit: 1 })) this.failedSeq = key
    this.failed = o.failures.getCount()
  }

  /** Starts delivering (after the owners of held deliveries had their look at them). */
  start(): void {
    this.pump()
  }

  /** Queues a delivery; resolves once it is durable. Throws WEBHOOK_OUTBOX_FULL or _CAPACITY with no room. */
  async enqueue(d: NewDelivery & { body: string }): Promise<string> {
    return await this.add(d, d.body)
  }

  /** Reserves a delivery whose body `release` gives later; counted and durable like any other. */
  async hold(d: NewDelivery): Promise<string> {
    return await this.add(d, null)
  }

  /** Gives a held delivery its body: from now on it is delivered. False when no such delivery is held. */
  async release(id: string, body: string): Promise<boolean> {
    const seq = this.byId.get(id)
    const e = seq === undefined ? undefined : this.entries.get(seq)
    const stored = seq === undefined ? undefined : this.o.db.get(seq)
    if (e === undefined || !e.held || stored === undefined || this.closed) return false
    await this.o.db.put(e.seq, { ...stored, body, nextAt: this.now() })
    e.held = false
    e.nextAt = this.now()
    this.pump()
    return true
  }

  /** Forgets a held or waiting delivery (what it was about no longer exists). */
  async drop(id: string): Promise<void> {
    const seq = this.byId.get(id)
    if (seq === undefined || this.inFlight.has(seq) || this.closed) return
    await this.o.db.remove(seq)
    this.untrack(seq)
    this.pump()
  }

  /** Held deliveries of `source`: at start-up, the promises a killed process left to keep. */
  held(source: string): { id: string; ref: string; owner: string }[] {
    const out: { id: string; ref: string; owner: string }[] = []
    for (const e of this.entries.values())
      if (e.held && e.source === source) out.push({ id: e.id, ref: e.ref, owner: e.owner })
    return out
  }

  /** Whether `owner` may queue `n` more deliveries now. */
  hasRoom(owner: string, n = 1): boolean {
    return this.entries.size + n <= this.o.limits.total && (this.owners.get(owner) ?? 0) + n <= this.o.limits.perOwner
  }

  /** Deliveries waiting (held, due later, or in flight), oldest first, without bodies or headers. */
  pending(limit: number): (Entry & { inFlight: boolean })[] {
    const out: (Entry & { inFlight: boolean })[] = []
    for (const e of this.entries.values()) {
      if (out.length >= limit) break
      out.push({ ...e, inFlight: this.inFlight.has(e.seq) })
    }
    return out
  }

  /** Given-up deliveries, newest first. */
  failures(limit: number): FailedDelivery[] {
    return [...this.o.failures.getRange({ reverse: true, limit }).map((x) => x.value)]
  }

  get stats(): OutboxStats {
    let held = 0
    for (const e of this.entries.values()) if (e.held) held++
    return {
      pending: this.entries.size,
      held,
      inFlight: this.inFlight.size,
      delivered: this.delivered,
      failed: this.failed
    }
  }

  /** Stops delivering: attempts in flight are aborted and stay in the outbox for the next start. */
  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    this.abort.abort()
    await Promise.all(this.inFlight.values())
  }

  private async add(d: NewDelivery, body: string | null): Promise<string> {
    if (this.closed) throw new PlatformError(WEBHOOKS_ERRORS.WEBHOOK_OUTBOX_CAPACITY, { limit: this.o.limits.total })
    if (this.entries.size >= this.o.limits.total)
      throw new PlatformError(WEBHOOKS_ERRORS.WEBHOOK_OUTBOX_CAPACITY, { limit: this.o.limits.total })
    if ((this.owners.get(d.owner) ?? 0) >= this.o.limits.perOwner)
      throw new PlatformError(WEBHOOKS_ERRORS.WEBHOOK_OUTBOX_FULL, { owner: d.owner, limit: this.o.limits.perOwner })
    const now = this.now()
    const stored: StoredDelivery = {
      // the Standard Webhooks message id: the same on every attempt, so a receiver drops a repeat
      id: `msg_${randomUUID().replaceAll('-', '')}`,
      seq: ++this.seq,
      owner: d.owner,
      source: d.source,
      ref: d.ref,
      queue: d.queue ?? `${d.source} ${d.ref} ${d.url}`,
      url: d.url,
      headers: d.headers ?? {},
      body,
      createdAt: now,
      attempts: 0,
      nextAt: now
    }
    // counted before the write: a flood of concurrent enqueues cannot all pass the check
    const entry = entryOf(stored)
    this.track(entry)
    this.writing.add(stored.seq)
    try {
      await this.o.db.put(stored.seq, stored)
    } catch (err) {
      this.untrack(stored.seq)
      throw err
    } finally {
      this.writing.delete(stored.seq)
    }
    this.pump()
    return stored.id
  }

  private track(e: Entry): void {
    this.entries.set(e.seq, e)
    this.byId.set(e.id, e.seq)
    this.owners.set(e.owner, (this.owners.get(e.owner) ?? 0) + 1)
    const q = this.queues.get(e.queue)
    if (q === undefined) this.queues.set(e.queue, [e.seq])
    else q.push(e.seq)
  }

  private untrack(seq: number): void {
    const e = this.entries.get(seq)
    if (e === undefined) return
    this.entries.delete(seq)
    this.byId.delete(e.id)
    const n = (this.owners.get(e.owner) ?? 1) - 1
    if (n <= 0) this.owners.delete(e.owner)
    else this.owners.set(e.owner, n)
    const q = this.queues.get(e.queue)
    if (q !== undefined) {
      const i = q.indexOf(seq)
      if (i >= 0) q.splice(i, 1)
      if (q.length === 0) this.queues.delete(e.queue)
    }
  }

  /** Starts every due head of a queue while slots are free, and sets the timer for the next one due. */
  private pump(): void {
    if (this.closed) return
    const now = this.now()
    let next = Infinity
    for (const q of this.queues.values()) {
      const e = this.entries.get(q[0]!)
      if (e === undefined || e.held || this.inFlight.has(e.seq) || this.writing.has(e.seq)) continue
      if (e.nextAt > now) next = Math.min(next, e.nextAt)
      else if (this.inFlight.size < this.o.concurrency) this.attempt(e)
    }
    if (next === Infinity || next >= this.timerAt) return
    clearTimeout(this.timer)
    this.timerAt = next
    this.timer = setTimeout(
      () => {
        this.timerAt = Infinity
        this.pump()
      },
      Math.min(Math.max(0, next - now), 2 ** 31 - 1)
    )
    this.timer.unref()
  }

  private attempt(e: Entry): void {
    const run = this.run(e).catch((err: unknown) => {
      this.o.logger.error({ err, webhook: e.id }, 'webhook delivery bookkeeping failed')
    })
    this.inFlight.set(e.seq, run)
    void run.finally(() => {
      this.inFlight.delete(e.seq)
      this.pump()
    })
  }

  private async run(e: Entry): Promise<void> {
    const stored = this.o.db.get(e.seq)
    if (stored === undefined || stored.body === null) {
      // gone from LMDB (or never given a body): nothing to send, and nothing to try again
      if (stored === undefined) this.untrack(e.seq)
      return
    }
    const result = await this.o.send(stored, stored.body, this.abort.signal)
    // closing: the attempt was cut short and counts for nothing; the next start sends it again
    if (this.closed) return
    const at = this.now()
    const last: AttemptRecord = {
      at,
      ...(result.status !== undefined ? { status: result.status } : {}),
      ...(result.error !== undefined ? { error: result.error } : {})
    }
    const attempts = stored.attempts + 1
    if (result.ok) {
      await this.o.db.remove(e.seq)
      this.untrack(e.seq)
      this.delivered++
      return
    }
    if (result.final === true || attempts >= this.o.retry.maxAttempts) {
      await this.giveUp({ ...stored, attempts, last })
      this.o.logger.warn(
        { webhook: e.id, source: e.source, ref: e.ref, attempts, error: last.error },
        'webhook delivery given up'
      )
      return
    }
    const nextAt = at + this.delay(attempts, result.retryAfterMs)
    await this.o.db.put(e.seq, { ...stored, attempts, nextAt, last })
    e.attempts = attempts
    e.nextAt = nextAt
    e.last = last
  }

  /** Exponential backoff with jitter (up to half taken off), at least the receiver's Retry-After; capped. */
  private delay(attempts: number, retryAfterMs: number | undefined): number {
    const { baseMs, maxMs } = this.o.retry
    const backoff = Math.min(maxMs, baseMs * 2 ** Math.min(attempts - 1, 30))
    const jittered = backoff - Math.floor(this.random() * (backoff / 2))
    return Math.min(maxMs, Math.max(jittered, retryAfterMs ?? 0))
  }

  private async giveUp(d: StoredDelivery): Promise<void> {
    const { body: _body, headers: _headers, ...kept } = d
    const key = ++this.failedSeq
    await this.o.failures.put(key, { ...kept, failedAt: this.now() })
    await this.o.db.remove(d.seq)
    this.untrack(d.seq)
    this.failed++
    // the failures kept are bounded: the oldest go
    if (this.failed > this.o.failuresKept) {
      const extra = this.failed - this.o.failuresKept
      for (const old of this.o.failures.getKeys({ limit: extra })) await this.o.failures.remove(old)
      this.failed = this.o.failuresKept
    }
  }
}

function entryOf(d: StoredDelivery): Entry {
  const { body, headers: _headers, ...rest } = d
  return { ...rest, held: body === null }
}
