/** The agent fleet: coordinators, dispatch, the coordination journal. */
export { FLEET } from './key.js'
export { type DispatchContext, type FleetDispatcher } from './fleet-types.js'
export { resultKeys } from './fleet-patterns.js'
export { newCoordinationId } from './coordination-id.js'
