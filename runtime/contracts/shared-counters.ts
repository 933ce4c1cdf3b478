import { CORE, ExtensionPoint } from './area-key.js'

/**
 * What a counter answers: at once in process (so a single node's policies stay synchronous and
 * as fast as before), through a promise when the counts live across the network. A promise that
 * rejects means the counts could not be reached; a limit built on them must then refuse.
 */
export type CounterAnswer<T> = T | Promise<T>

export interface WindowHit {
  /** False when the window was full: nothing was counted. */
  admitted: boolean
  /** Events in the window, this one included when it was counted. */
  count: number
}

export interface SlotTake {
  /** False when every slot was held: nothing was taken. */
  acquired: boolean
  /** Slots held under the key, this one included when it was taken. */
  held: number
}

/** One sliding-window limit: at most `limit` events per key within any `windowMs`. */
export interface SlidingWindow {
  /** Counts one event under `key` unless the window is full; `peek` answers the same without counting. */
  hit(key: string, peek?: boolean): CounterAnswer<WindowHit>
}

/** One slot limit: at most `max` slots held per key at once. */
export interface SlotPool {
  /** Takes one slot under `key` unless all are held; `peek` answers the same without taking. */
  acquire(key: string, peek?: boolean): CounterAnswer<SlotTake>
  /**
   * Gives back one slot this node holds under `key` (none held: nothing happens). Never throws:
   * a slot a node cannot give back expires on its own once the node stops renewing it.
   */
  release(key: string): void
  /** Slots this node holds under `key`. */
  heldHere(key: string): number
}

export interface BudgetTake {
  /** False when the budget held less than the cost: nothing was taken. */
  taken: boolean
  /** Milliseconds until the budget holds the cost again (0 when taken). */
  waitMs: number
}

/**
 * One budget per key (a token bucket): `capacity` units at most, refilled continuously at
 * `capacity` per `refillMs`, a key never seen starting full.
 */
export interface TokenBudget {
  /** Takes `cost` units (at most `capacity`: larger costs are taken as `capacity`) unless fewer are left. */
  take(key: string, cost: number): CounterAnswer<BudgetTake>
}

/**
 * Counts that limits share: across every node of a cluster when a cluster area adds a networked
 * implementation, else within this process. Handles of one `name` share their counts (on every
 * node); `name` is a limit's identity, such as a policy's name.
 */
export interface SharedCounters {
  readonly kind: 'in-process' | 'redis'
  window(name: string, limit: number, windowMs: number): SlidingWindow
  slots(name: string, max: number): SlotPool
  budget(name: string, capacity: number, refillMs: number): TokenBudget
  /** Whether the counts can be reached now (false: limits built on them refuse). */
  available(): boolean
  close(): Promise<void>
}

/**
 * The counters every limit reads (`platform.sharedCounters()`): the cluster area adds the Redis
 * ones in cluster mode; without them a node counts in process.
 */
export const SHARED_COUNTERS = new ExtensionPoint<SharedCounters>(CORE, 'shared-counters', true)
