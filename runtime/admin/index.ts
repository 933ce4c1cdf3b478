/** The admin control plane: its route table, the fleet and task views it reads, its key. */
export { ADMIN, ADMIN_FLEET_VIEW, ADMIN_TASK_VIEW } from './key.js'
export { EMPTY_FLEET, type FleetView, type JournalEvent } from './fleet-view.js'
export { type TaskView, type TaskInfo } from './task-view.js'
export { mountAreaRoutes, type AdminRoute } from './route-table.js'
export { shown } from './shown-value.js'
