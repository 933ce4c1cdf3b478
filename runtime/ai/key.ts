import { AreaKey } from '../contracts/index.js'
import type { AiService } from './ai-service.js'

/** The AI area's service, provided by its install. */
export const AI = new AreaKey<AiService>('ai')
