/** The agent fleet: coordinators, dispatch, the coordination journal. */
export { FLEET } from './key.js'
export { type DispatchContext } from './fleet-types.js'
