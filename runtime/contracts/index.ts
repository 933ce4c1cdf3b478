/**
 * The bottom layer: the types several areas share and the tokens that name area services. It
 * imports nothing of ours, so every area may depend on it without depending on another area.
 */
export * from './policy.js'
export * from './tool-call.js'
export * from './audit.js'
export { AreaKey, ExtensionPoint, CORE } from './area-key.js'
export * from './commitment.js'
export { isoNow } from './iso-now.js'
export { isPromise } from './is-promise.js'
export * from './agent-call.js'
export {
  BACKPLANE,
  BACKPLANE_TOPIC,
  NODE_COUNTS,
  NODE_ID,
  type Backplane,
  type BackplaneListener,
  type NodeIdentity
} from './backplane.js'
export {
  SHARED_COUNTERS,
  type BudgetTake,
  type CounterAnswer,
  type SharedCounters,
  type TokenBudget,
  type SlidingWindow,
  type SlotPool,
  type SlotTake,
  type WindowHit
} from './shared-counters.js'
export {
  PlatformError,
  defineErrors,
  isPlatformError,
  isWireError,
  mergeErrors,
  type ErrorDef,
  type ErrorDefs,
  type ErrorSource
} from './platform-error.js'
