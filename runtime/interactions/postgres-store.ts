import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg'
import { PlatformError } from '../contracts/index.js'
import { STORE_ERRORS, describeUrl, isUnreachable } from '../store/index.js'
import { INTERACTION_ERRORS } from './errors.js'
import { decodeCursor, encodeCursor, sortKeyOf } from './list-cursor.js'
import { migrate } from './postgres-schema.js'
import { PostgresRunLeases, markInterrupted } from './postgres-leases.js'
import {
  FIND_KEY,
  INSERT_END,
  INSERT_STEP,
  SAVE_KEYED,
  UPSERT,
  WHY_NOT_STORED,
  upsertParams,
  type KeyRow
} from './postgres-statements.js'
import {
  TERMINAL_STEP_TYPES,
  checkAfter,
  checkClaim,
  checkHeader,
  checkKeyLookup,
  checkId,
  checkQuery,
  checkStep,
  endedError,
  headerOf,
  interactionOf,
  isLive,
  recordOf,
  stepOf
} from './store-input.js'
import type {
  IdempotencyClaim,
  IdempotencyRecord,
  Interaction,
  InteractionHeader,
  InteractionStep,
  InteractionStore,
  ListPage,
  ListQuery,
  RunLeases
} from './types.js'

export interface PostgresStoreOptions {
  url: string
  /** The owner recorded on the runs this store saves in flight: `start()` marks only these. */
  node: string
  poolSize: number
  /** An idle connection that broke (server restarted): the pool replaces it; this only reports. */
  onError?: (err: Error) => void
  /** How often the server is probed for `available()` (default 2 s). */
  probeMs?: number
  /** How long a node owns a run it no longer renews (`platform.cluster.lease-ms`, default 5 s). */
  leaseMs?: number
  /** How long a new connection may take before the call fails (default 5 s). */
  connectTimeoutMs?: number
}

const FOREIGN_KEY_VIOLATION = '23503'

/**
 * Interactions in PostgreSQL through a `pg` pool: headers in `platform_interactions` (the record
 * as `json`, which keeps key order, next to the columns lists filter and sort on), steps in
 * `platform_interaction_steps` keyed by (interaction id, seq) and deleted with their record, as are
 * idempotency keys in `platform_interaction_keys`. A
 * resolved write is committed by the server. Several nodes may share the database: each run
 * records its owner node, `start()` marks only this node's runs, and the step and header writes
 * refuse anything after a run's end. A live run is owned through a lease (`leases`) whose epoch
 * every write of its owner carries.
 */
export class PostgresInteractionStore implements InteractionStore {
  readonly kind = 'postgres'
  private pool: Pool | undefined
  private up = false
  private probing = false
  private probe: NodeJS.Timeout | undefined
  /** Per interaction, the last insert issued: the next one waits for it. */
  private readonly appending = new Map<string, Promise<void>>()
  /** The lease epoch of each live run this store saved, carried by its writes. */
  private readonly held = new Map<string, number>()
  private readonly leaseMs: number
  readonly leases: RunLeases

  constructor(private readonly opts: PostgresStoreOptions) {
    this.leaseMs = opts.leaseMs ?? 5000
    this.leases = new PostgresRunLeases({
      query: (text, params) => this.query(text, params),
      transaction: (fn) => {
        if (this.pool === undefined) throw new Error('the postgres interaction store is not started')
        return inClient(this.pool, fn)
      },
      leaseMs: this.leaseMs,
      held: this.held
    })
  }

  async start(): Promise<number> {
    if (this.pool !== undefined) throw new Error('the postgres interaction store is started already')
    // imported here: every platform start would otherwise load the driver, most only to use LMDB
    const { Pool } = await import('pg')
    const pool = new Pool({
      connectionString: this.opts.url,
      max: this.opts.poolSize,
      // a server that does not answer fails the call (503) instead of queueing it for ever
      connectionTimeoutMillis: this.opts.connectTimeoutMs ?? 5000
    })
    pool.on('error', (err) => {
      if (isUnreachable(err)) this.up = false
      this.opts.onError?.(err)
    })
    try {
      const marked = await inClient(pool, async (c) => {
        await migrate(c)
        return markInterrupted(c, this.opts.node)
      })
      this.pool = pool
      this.up = true
      this.probe = setInterval(() => void this.check(), this.opts.probeMs ?? 2000).unref()
      return marked
    } catch (e) {
      await pool.end()
      throw e
    }
  }

  async stop(): Promise<void> {
    const pool = this.pool
    this.pool = undefined
    clearInterval(this.probe)
    await pool?.end()
  }

  available(): boolean {
    return this.up
  }

  /** One `SELECT 1`: readiness follows the server even while no request comes. */
  private async check(): Promise<void> {
    if (this.probing || this.pool === undefined) return
    this.probing = true
    try {
      await this.query('SELECT 1', [])
    } catch {
      /* query() marked it down */
    } finally {
      this.probing = false
    }
  }

  /**
   * Every statement goes through here: a server out of reach marks the store down and fails the
   * call with a 503 naming the server (without credentials); an answer marks it up again.
   */
  private async query<R extends QueryResultRow>(text: string, params: unknown[]): Promise<QueryResult<R>> {
    if (this.pool === undefined) throw new Error('the postgres interaction store is not started')
    try {
      const r = await this.pool.query<R>(text, params)
      this.up = true
      return r
    } catch (e) {
      if (!isUnreachable(e)) throw e
      this.up = false
      throw new PlatformError(STORE_ERRORS.STORE_UNAVAILABLE, {
        store: `PostgreSQL at ${describeUrl(this.opts.url)}`
      })
    }
  }

  async save(header: InteractionHeader): Promise<void> {
    checkHeader(header)
    const { rows } = await this.query<{ lease_epoch: string }>(UPSERT, this.params(header))
    this.hold(header, rows[0])
  }

  /** $1 to $9 of a header write: the header, this node, the lease and the epoch this store holds. */
  private params(header: InteractionHeader): unknown[] {
    return upsertParams(headerOf(header), this.opts.node, this.leaseMs, this.held.get(header.id))
  }

  /**
   * After a header write: a live run's lease is held (its epoch kept), an ended one's let go. A
   * refused write keeps the epoch it carried, which never matches again: the run stays fenced.
   */
  private hold(header: InteractionHeader, row: { lease_epoch: string } | undefined): void {
    if (row === undefined) throw endedError(header.id)
    if (isLive(header.status)) this.held.set(header.id, Number(row.lease_epoch))
    else this.held.delete(header.id)
  }

  async saveKeyed(
    header: InteractionHeader,
    claim: IdempotencyClaim,
    now: number
  ): Promise<IdempotencyRecord | undefined> {
    checkHeader(header)
    checkClaim(claim)
    checkKeyLookup(header.userId, claim.key, now)
    const params = [...this.params(header), claim.key, claim.fingerprint, claim.expiresAt, now]
    // a key held, then expired or deleted before it could be read, is claimable again: try once more
    for (let attempt = 0; attempt < 3; attempt++) {
      const { rows } = await this.query<{ lease_epoch: string }>(SAVE_KEYED, params)
      if (rows.length > 0) {
        this.hold(header, rows[0])
        return undefined
      }
      const held = await this.findKey(header.userId, claim.key, now)
      // the key is this id's, yet no row was written: the header it would replace has ended
      if (held?.interactionId === header.id) throw endedError(header.id)
      if (held !== undefined) return held
    }
    throw new Error(`idempotency key of ${header.userId} changed hands three times while ${header.id} was saved`)
  }

  async findKey(userId: string, key: string, now: number): Promise<IdempotencyRecord | undefined> {
    checkKeyLookup(userId, key, now)
    const { rows } = await this.query<KeyRow>(FIND_KEY, [userId, key, now])
    const r = rows[0]
    return r === undefined
      ? undefined
      : recordOf({
          userId: r.user_id,
          key: r.key,
          fingerprint: r.fingerprint,
          interactionId: r.interaction_id,
          expiresAt: Number(r.expires_at)
        })
  }

  appendStep(id: string, step: InteractionStep): Promise<void> {
    try {
      checkId(id)
      checkStep(step)
    } catch (e) {
      return Promise.reject(e as Error)
    }
    // pooled connections may commit out of order: one interaction's inserts go one after another
    const prev = this.appending.get(id)
    const done = prev === undefined ? this.insertStep(id, step) : prev.then(() => this.insertStep(id, step))
    const tail = done.catch(() => {})
    this.appending.set(id, tail)
    void tail.then(() => {
      if (this.appending.get(id) === tail) this.appending.delete(id)
    })
    return done
  }

  private async insertStep(id: string, step: InteractionStep): Promise<void> {
    let rowCount: number | null
    try {
      const sql = TERMINAL_STEP_TYPES.has(step.type) ? INSERT_END : INSERT_STEP
      const epoch = this.held.get(id) ?? null
      ;({ rowCount } = await this.query(sql, [id, step.seq, JSON.stringify(stepOf(step)), epoch]))
    } catch (e) {
      if ((e as { code?: string }).code === FOREIGN_KEY_VIOLATION)
        throw new PlatformError(INTERACTION_ERRORS.INTERACTION_NOT_STORED, { id })
      throw e
    }
    if ((rowCount ?? 0) > 0) return
    // nothing written: the seq was there already (ignored), the record is gone, or the run has ended
    const { rows } = await this.query<{ stored: boolean }>(WHY_NOT_STORED, [id, step.seq])
    if (rows.length === 0) throw new PlatformError(INTERACTION_ERRORS.INTERACTION_NOT_STORED, { id })
    // ended, or no longer this node's (its epoch moved on): either way this writer's run is over
    if (!rows[0]!.stored) throw endedError(id)
  }

  async load(id: string): Promise<Interaction | undefined> {
    checkId(id)
    const { rows } = await this.query<{ header: InteractionHeader }>(
      'SELECT header FROM platform_interactions WHERE id = $1',
      [id]
    )
    if (rows.length === 0) return undefined
    return interactionOf(rows[0]!.header, await this.range(id, -1, null))
  }

  async steps(id: string, after: number, limit?: number): Promise<InteractionStep[]> {
    checkId(id)
    checkAfter(after, limit)
    return this.range(id, after, limit ?? null)
  }

  async list(query: ListQuery): Promise<ListPage> {
    checkQuery(query)
    const params: unknown[] = [query.userId, query.limit + 1]
    let where = 'user_id = $1'
    if (query.conversationId !== undefined) {
      params.push(query.conversationId)
      where += ` AND conversation_id = $${params.length}`
    }
    if (query.cursor !== undefined) {
      params.push(...decodeCursor(query.cursor))
      where += ` AND (created_at, id) < ($${params.length - 1}, $${params.length})`
    }
    const { rows } = await this.query<{ header: InteractionHeader }>(
      `SELECT header FROM platform_interactions WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $2`,
      params
    )
    const items = rows.slice(0, query.limit).map((r) => headerOf(r.header))
    return rows.length > query.limit ? { items, nextCursor: encodeCursor(sortKeyOf(items.at(-1)!)) } : { items }
  }

  async delete(id: string): Promise<boolean> {
    checkId(id)
    const { rowCount } = await this.query('DELETE FROM platform_interactions WHERE id = $1', [id])
    this.held.delete(id)
    return (rowCount ?? 0) > 0
  }

  private async range(id: string, after: number, limit: number | null): Promise<InteractionStep[]> {
    const { rows } = await this.query<{ step: InteractionStep }>(
      'SELECT step FROM platform_interaction_steps WHERE interaction_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [id, after, limit]
    )
    return rows.map((r) => stepOf(r.step))
  }
}

async function inClient<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect()
  try {
    return await fn(c)
  } finally {
    c.release()
  }
}
