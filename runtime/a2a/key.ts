import { AreaKey } from '../contracts/index.js'
import type { A2aService } from './a2a-service.js'

export const A2A = new AreaKey<A2aService>('a2a')
