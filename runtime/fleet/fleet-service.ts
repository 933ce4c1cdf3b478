import type { AgentTransport, FleetDispatcher, JournalEventType, JournalStore } from './fleet-types.js'
import type { FleetInterceptor } from './interceptors.js'

/** What the fleet area offers: the dispatcher coordinators and workflow runs call agents through, and the journal. */
export interface FleetService {
  readonly dispatcher: FleetDispatcher
  /** The store journal events go to now. */
  readonly journal: JournalStore
  /** Resolves once every journal event emitted so far is in the store. */
  journalSettled(): Promise<void>
  /**
   * Queues one journal event (appended with the dispatches of the same turn); returns its id, for
   * the events that hang under it. Workflow runs record their own coordination with it.
   */
  emitJournal(
    coordinationId: string,
    parentEventId: string | null,
    type: JournalEventType,
    fields: Record<string, unknown>
  ): string
  /** Names of the coordinators the loaded plugins declare. */
  coordinatorNames(): string[]
  /**
   * Adds a FleetInterceptor after those registered (the governance one is first); every
   * dispatch asks them in order. Returns its removal.
   */
  addInterceptor(interceptor: FleetInterceptor): () => void
  /** Registers the transport of an agent this platform does not host (A2A); returns its removal. */
  registerTransport(agent: string, transport: AgentTransport): () => void
}
