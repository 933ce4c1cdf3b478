import { AreaKey } from '../contracts/index.js'
import type { WorkflowsService } from './workflows-service.js'

/** The workflows area, provided when the admin control plane is served. */
export const WORKFLOWS = new AreaKey<WorkflowsService>('workflows')
