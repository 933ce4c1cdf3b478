import type { FleetView } from './fleet-view.js'
import type { AdminRoute } from './route-table.js'

/** What the admin area offers other areas: its route table and the seat of the fleet's view. */
export interface AdminService {
  /** Every admin route as declared (method, path, schemas, gate), in mount order. */
  readonly routes: readonly AdminRoute[]
  /** The fleet area hands its view here; until then the fleet routes answer from empty registries. */
  setFleet(view: FleetView): void
}
