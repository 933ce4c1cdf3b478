import type { FleetDispatcher, JournalStore } from './fleet-types.js'

/** What the fleet area offers: the dispatcher coordinators and workflow runs call agents through, and the journal. */
export interface FleetService {
  readonly dispatcher: FleetDispatcher
  readonly journal: JournalStore
}
