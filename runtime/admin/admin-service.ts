import type { FleetView } from './fleet-view.js'
import type { AdminRoute } from './route-table.js'
import type { TaskView } from './task-view.js'

/** What the admin area offers other areas: its route table and the seats of the fleet's and the A2A tasks' views. */
export interface AdminService {
  /** Every admin route as declared (method, path, schemas, gate), in mount order. */
  readonly routes: readonly AdminRoute[]
  /** The fleet area hands its view here; until then the fleet routes answer from empty registries. */
  setFleet(view: FleetView): void
  /** The A2A area hands its task view here; until then the task routes answer from an empty registry. */
  setTasks(view: TaskView): void
}
