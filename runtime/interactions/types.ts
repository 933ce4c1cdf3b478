import type { TokenUsage } from '../ai/index.js'

/** CREATED, then RUNNING; exactly one of the last three ends it. */
export type InteractionStatus = 'CREATED' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELLED'

export const TERMINAL_STATUSES: ReadonlySet<InteractionStatus> = new Set(['COMPLETED', 'FAILED', 'CANCELLED'])

export type StepType =
  'text' | 'tool-call' | 'tool-result' | 'tool-error' | 'agent-step' | 'approval' | 'usage' | 'completion' | 'error'

/** One captured step; `seq` counts from 0 per interaction and is the ordering and resume key. */
export interface InteractionStep {
  seq: number
  type: StepType
  text: string | null
  toolName: string | null
  /** Never null. */
  data: Record<string, unknown>
  usage: TokenUsage | null
  /** ISO-8601. */
  createdAt: string
}

/** The record the routes return, fields in wire order. */
export interface Interaction {
  id: string
  parentId: string | null
  conversationId: string
  agentId: string | null
  /** The owner; reads and writes are scoped to it. */
  userId: string
  model: string | null
  status: InteractionStatus
  background: boolean
  store: boolean
  steps: InteractionStep[]
  finalText: string | null
  usage: TokenUsage | null
  errorMessage: string | null
  createdAt: string
  updatedAt: string
}

/** The record without its steps: what `save` writes and `list` returns. */
export type InteractionHeader = Omit<Interaction, 'steps'>

export interface ListQuery {
  /** Always the caller: the owner filter is never optional. */
  userId: string
  conversationId?: string
  /** 1 to 500. */
  limit: number
  /** Opaque, from the previous page's `nextCursor`. */
  cursor?: string
}

export interface ListPage {
  /** Newest first. */
  items: InteractionHeader[]
  /** Absent on the last page. */
  nextCursor?: string
}

/** What a request's `Idempotency-Key` claims: kept with the interaction the request creates. */
export interface IdempotencyClaim {
  /** 1 to 255 visible ASCII characters; keys belong to the interaction's owner. */
  key: string
  /** The first request's route and body, hashed: a retry must match it. */
  fingerprint: string
  /** Epoch milliseconds; from then on the key may start a new interaction. */
  expiresAt: number
}

/** A key as a store holds it: the claim, its owner and the interaction it started. */
export interface IdempotencyRecord extends IdempotencyClaim {
  userId: string
  interactionId: string
}

/**
 * Where interactions live. Every implementation passes the one shared contract suite. A write is
 * acknowledged when its promise resolves: from then on it survives a crash of the process.
 */
export interface InteractionStore {
  readonly kind: 'memory' | 'lmdb' | 'postgres'
  /**
   * Opens the store (Postgres: connects, creates or migrates the schema) and marks every
   * interaction still RUNNING or CREATED as FAILED with `interrupted: server restarted`: the
   * process that ran it is gone. Resolves to the number so marked.
   */
  start(): Promise<number>
  /** Closes connections; pending acknowledged writes are already durable. */
  stop(): Promise<void>
  /**
   * Whether the store can be reached now (`/readyz` reports it). An embedded store always can; a
   * server-backed one says false while its server is down, and its calls then fail with a 503.
   */
  available(): boolean
  /** Inserts or replaces the header of an interaction (its steps are untouched). */
  save(header: InteractionHeader): Promise<void>
  /**
   * Appends one step; seqs of an interaction arrive in increasing order. A second write of a seq is
   * ignored. Appends may be issued before earlier ones resolve: a reader never sees a step of an
   * interaction without every step issued before it.
   */
  appendStep(id: string, step: InteractionStep): Promise<void>
  /** The whole record with its steps in seq order; undefined when unknown. */
  load(id: string): Promise<Interaction | undefined>
  /** The steps with seq greater than `after` (-1: all), in seq order, at most `limit`. */
  steps(id: string, after: number, limit?: number): Promise<InteractionStep[]>
  list(query: ListQuery): Promise<ListPage>
  /**
   * Saves a new interaction's header and the owner's idempotency key as one atomic write, unless
   * the owner already holds that key unexpired (`expiresAt > now`): then nothing is written and
   * the holder's record comes back. Two processes sharing the store and racing one key: one
   * saves, the other gets the winner's record. An expired key is taken over.
   */
  saveKeyed(header: InteractionHeader, claim: IdempotencyClaim, now: number): Promise<IdempotencyRecord | undefined>
  /** The owner's unexpired key; undefined when unknown, expired, or its interaction deleted. */
  findKey(userId: string, key: string, now: number): Promise<IdempotencyRecord | undefined>
  /** Removes the record, its steps and its idempotency key; resolves true when it existed. */
  delete(id: string): Promise<boolean>
}

/** Live steps of interactions in flight, for streams; the store stays the truth for replay. */
export interface InteractionFeed {
  /**
   * Calls `onStep` for each step captured from now on and `onTerminal` once with the final
   * header; returns the unsubscribe function.
   */
  subscribe(
    id: string,
    listener: { onStep(step: InteractionStep): void; onTerminal(header: InteractionHeader): void }
  ): () => void
}
