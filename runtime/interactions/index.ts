/** The interactions area: durable agent turns, their stores and their live streams. */
export { type InteractionHeader, type InteractionStep } from './types.js'
export { LmdbInteractionStore } from './lmdb-store.js'
export { INTERACTIONS } from './key.js'
export { PostgresInteractionStore } from './postgres-store.js'
export type { InteractionRequest, InteractionService } from './service.js'
export { RESERVED_METADATA } from './routes.js'
export type { Interaction } from './types.js'
export { INTERACTION_ERRORS } from './errors.js'
