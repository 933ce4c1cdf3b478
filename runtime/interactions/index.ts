/** The interactions area: durable agent turns, their stores and their live streams. */
export {
  TERMINAL_STATUSES,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type Interaction,
  type InteractionFeed,
  type InteractionHeader,
  type InteractionStatus,
  type InteractionStep,
  type InteractionStore,
  type ListPage,
  type ListQuery,
  type StepType
} from './types.js'
export { StepFeed } from './feed.js'
export { MemoryInteractionStore } from './memory-store.js'
export { LmdbInteractionStore } from './lmdb-store.js'
export {
  INTERACTION_ID,
  INTERRUPTED_MESSAGE,
  MAX_LIST_LIMIT,
  InvalidCursorError,
  UnknownInteractionError
} from './store-input.js'
export { INTERACTIONS } from './key.js'
export { InteractionService, conversationKey, type InteractionRequest } from './service.js'
export { StepCapture, type Outcome, type CaptureOptions } from './capture.js'
export { PostgresInteractionStore, type PostgresStoreOptions } from './postgres-store.js'
export { storeFromConfig } from './store-from-config.js'
export { INTERACTION_ERRORS } from './errors.js'
