import { AreaKey, ExtensionPoint } from '../contracts/index.js'
import type { AdminService } from './admin-service.js'
import type { FleetView } from './fleet-view.js'
import type { TaskView } from './task-view.js'

/** The admin control plane, provided when `platform.admin.enabled`. */
export const ADMIN = new AreaKey<AdminService>('admin')

/**
 * The fleet the admin routes show (the fleet area adds it); EMPTY_FLEET while none is added. The
 * last added wins, so the composition root (or a test) may wrap the fleet area's view.
 */
export const ADMIN_FLEET_VIEW = new ExtensionPoint<FleetView>('admin', 'fleet-view')

/** The A2A tasks the admin routes show (the A2A area adds them; the last added wins); EMPTY_TASKS while none is. */
export const ADMIN_TASK_VIEW = new ExtensionPoint<TaskView>('admin', 'task-view')
