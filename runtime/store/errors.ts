import { defineErrors } from '../contracts/index.js'

/**
 * The store core's codes. A shared store out of reach is one code whichever area's data it holds,
 * so a client (and a load balancer's retry rule) tells it apart from every other failure by one name.
 */
export const STORE_ERRORS = defineErrors({
  STORE_UNAVAILABLE: {
    status: 503,
    message: (p) => `${p.store} cannot be reached`,
    hint: 'Retry once the server is back (GET /readyz reports it); what was acknowledged before is kept'
  }
})
