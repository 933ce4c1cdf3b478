import { AreaKey } from '../contracts/index.js'
import type { InteractionService } from './service.js'

/** The interactions area's service: its store and live feed, and the lifecycle of every run. */
export const INTERACTIONS = new AreaKey<InteractionService>('interactions')
