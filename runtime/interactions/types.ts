// The wire records are declared once, with the client (sdk/client.d.ts): what the routes send is
// what the client reads. Only their types come from there, nothing runs from sdk/.
import type {
  Interaction,
  InteractionHeader,
  InteractionStatus,
  InteractionStep,
  ListPage,
  StepType
} from 'uws-agent-platform/client'

export type { Interaction, InteractionHeader, InteractionStatus, InteractionStep, ListPage, StepType }

export const TERMINAL_STATUSES: ReadonlySet<InteractionStatus> = new Set(['COMPLETED', 'FAILED', 'CANCELLED'])

export interface ListQuery {
  /** Always the caller: the owner filter is never optional. */
  userId: string
  conversationId?: string
  /** 1 to 500. */
  limit: number
  /** Opaque, from the previous page's `nextCursor`. */
  cursor?: string
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
   * interaction still RUNNING or CREATED that this store's node owns (or that no node is recorded
   * for) as FAILED with `interrupted: server restarted`: the process of this node that ran it is
   * gone, while other nodes sharing the store still run theirs. Resolves to the number so marked.
   */
  start(): Promise<number>
  /** Closes connections; pending acknowledged writes are already durable. */
  stop(): Promise<void>
  /**
   * Resolves once the work a store defers after acknowledging a write is done (LMDB: packing an
   * ended run's steps into one record); a store that defers nothing has no such method.
   */
  idle?(): Promise<void>
  /**
   * Whether the store can be reached now (`/readyz` reports it). An embedded store always can; a
   * server-backed one says false while its server is down, and its calls then fail with a 503.
   */
  available(): boolean
  /**
   * Inserts or replaces the header of an interaction (its steps are untouched); a header saved
   * while live records this store's node as the run's owner. Replacing a header that has ended
   * (COMPLETED, FAILED, CANCELLED) is refused with `INTERACTION_ENDED`: a run ends once.
   */
  save(header: InteractionHeader): Promise<void>
  /**
   * Appends one step; seqs of an interaction arrive in increasing order. A second write of a seq is
   * ignored. Appends may be issued before earlier ones resolve: a reader never sees a step of an
   * interaction without every step issued before it. A run holds at most one terminal step
   * (`completion`, `error`) and nothing after it: a step once the run has one, or once its header
   * has ended, is refused with `INTERACTION_ENDED`, atomically with whichever write ended it.
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
  /**
   * Run ownership across nodes, for a store several nodes share (Postgres); absent where one
   * process holds the data. A live header this store saves takes a lease on its run for this node.
   */
  readonly leases?: RunLeases
}

/** What `RunLeases.renew` found: runs this node no longer owns, and runs a cancel was asked for. */
export interface LeaseRenewal {
  /** Ended, deleted or taken by another node: their runs here stop writing. */
  lost: string[]
  /** Still this node's, with a cancel persisted by any node. */
  cancelled: string[]
}

/**
 * Leases with fencing: the node that saved a live run owns it until `lease-ms` after its last
 * renewal. Ownership is counted by an epoch that every step and header write of the owner carries;
 * a node that ends a run it did not own (its lease expired) moves the epoch on, so a write of the
 * old owner is refused with `INTERACTION_ENDED`, atomically with the end.
 */
export interface RunLeases {
  /** Extends this node's leases on the runs `ids` (one statement for them all). */
  renew(ids: readonly string[]): Promise<LeaseRenewal>
  /**
   * Ends FAILED `interrupted: node lost`, with one terminal step, every live run whose lease has
   * expired, whichever node owned it; resolves their final headers. One indexed query when none has.
   */
  sweep(): Promise<InteractionHeader[]>
  /**
   * Persists a cancel of the live run `id` of `userId`; resolves the node that owns it, or
   * undefined when there is no such live run.
   */
  requestCancel(id: string, userId: string): Promise<string | undefined>
  /** Of the runs `ids`, the final headers of those that have ended. */
  ended(ids: readonly string[]): Promise<InteractionHeader[]>
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
