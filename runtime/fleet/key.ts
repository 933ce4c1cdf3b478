import { AreaKey } from '../contracts/index.js'
import type { FleetService } from './fleet-service.js'

export const FLEET = new AreaKey<FleetService>('fleet')
