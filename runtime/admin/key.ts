import { AreaKey } from '../contracts/index.js'
import type { AdminService } from './admin-service.js'

/** The admin control plane, provided when `platform.admin.enabled`. */
export const ADMIN = new AreaKey<AdminService>('admin')
