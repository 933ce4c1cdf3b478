/**
 * The fleet's shared vocabulary: an agent call a coordinator makes, its result, the context a
 * dispatch runs in, the journal's events and the stores that keep them. The dispatcher, the
 * journal stores, the workflow runner and remote transports all speak these types.
 */
import type { AiCancelSignal } from '../ai/index.js'
import type { AgentCall, AgentResult } from '../contracts/index.js'

export type { AgentCall, AgentResult }

/** Where a dispatch happens: the coordination it belongs to, who asked, and the event it descends from. */
export interface DispatchContext {
  /** `coord-<uuid>`: one per coordinator turn or workflow run, never the coordinator's name. */
  coordinationId: string
  /** The coordinator's name (the issuer of commitments: `coordinator:<name>`). */
  coordinator: string
  /** Who the coordinator's turn runs for (`anonymous` when nobody signed in). */
  principal: string
  userId?: string
  /** The journal event the dispatch's own events hang under; null or absent: a root. */
  parentEventId?: string | null
  /** Cancelling it cancels the calls in flight. */
  signal?: AiCancelSignal
  /**
   * Told of each call's course (`executing`, `retrying`, `circuit-open`, `completed`, `failed`),
   * for the coordinator's client; absent for callers with nobody watching.
   */
  activity?: (step: string, data: Record<string, unknown>) => void
}

/** What runs a call on an agent the platform does not host (A2A); the dispatcher adds journal, retries and gates. */
export interface AgentTransport {
  readonly kind: 'local' | 'a2a'
  call(call: AgentCall, ctx: DispatchContext): Promise<AgentResult>
}

/** The patterns a coordinator dispatches with; the workflow runner uses the same. */
export interface FleetDispatcher {
  /** One call; never throws: a failure is a result with `success: false`. */
  call(ctx: DispatchContext, call: AgentCall): Promise<AgentResult>
  /** Calls at once, keyed by agent name (`name#2` for a repeat); the first failure cancels the siblings. */
  parallel(ctx: DispatchContext, calls: AgentCall[]): Promise<Record<string, AgentResult>>
  /** In order, each step's args gaining `_previous_result`; stops at the first failure. */
  pipeline(ctx: DispatchContext, calls: AgentCall[]): Promise<AgentResult[]>
  /** Calls at once; the majority answer (trimmed, lower-cased) wins, a tie going to the earliest agent. */
  vote(ctx: DispatchContext, calls: AgentCall[]): Promise<AgentResult>
}

export const JOURNAL_EVENT_TYPES = [
  'CoordinationStarted',
  'AgentDispatched',
  'AgentCompleted',
  'AgentFailed',
  'AgentEvaluated',
  'AgentHandoff',
  'RouteEvaluated',
  'CoordinationCompleted',
  'AgentActivityChanged',
  'CircuitStateChanged',
  'CommitmentRecorded',
  'ForkCreated'
] as const
export type JournalEventType = (typeof JOURNAL_EVENT_TYPES)[number]

/**
 * One stored journal event: `{eventId, parentEventId, type, coordinationId, timestamp, ...fields}`.
 * Fields per type: AgentDispatched `agentName, skill`; AgentCompleted `agentName, skill,
 * durationMs`; and so on (docs/fleet.md). Result texts and call args are never stored here.
 */
export type JournalRecord = {
  eventId: string
  parentEventId: string | null
  type: JournalEventType
  coordinationId: string
  timestamp: string
} & Record<string, unknown>

export interface JournalFilter {
  coordinationId?: string
  agent?: string
  /** Epoch ms, inclusive. */
  since?: number
  until?: number
  limit: number
}

/** Where journal events are kept. Appends are ordered; reads see every acknowledged append. */
export interface JournalStore {
  /** Keeps events in order; resolves once they are durable (for a durable store). */
  append(events: JournalRecord[]): Promise<void>
  /** Newest first, filtered (`coordinationId` wins over `agent`), at most `limit`. */
  query(filter: JournalFilter): Promise<JournalRecord[]>
  /** All events of one coordination, oldest first; empty when unknown. */
  coordination(id: string): Promise<JournalRecord[]>
  close(): Promise<void>
}
