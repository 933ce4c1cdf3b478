/** The agent fleet: coordinators, dispatch, the coordination journal. */
export { FLEET } from './key.js'
export type { FleetService } from './fleet-service.js'
export { MemoryJournalStore } from './memory-journal-store.js'
export { LmdbJournalStore, type JournalKey, type JournalIndexKey } from './lmdb-journal-store.js'
export { journalStore } from './journal-store.js'
export { AGENT_FIELDS, agentsOf, checkRecords } from './journal-record.js'
export { proceed, rewrite, deny, type FleetInterceptor, type InterceptDecision } from './interceptors.js'
export {
  JOURNAL_EVENT_TYPES,
  type AgentCall,
  type AgentResult,
  type AgentTransport,
  type DispatchContext,
  type FleetDispatcher,
  type JournalEventType,
  type JournalFilter,
  type JournalRecord,
  type JournalStore
} from './fleet-types.js'
