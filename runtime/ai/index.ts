/** The AI area: agent turns (filled by the AI-turns work). */
export { AI } from './key.js'
export type { AiService } from './ai-service.js'
