import { defineErrors } from '../contracts/index.js'

/** The codes of the stores every area shares: today, a database server out of reach. */
export const STORE_ERRORS = defineErrors({
  STORE_UNAVAILABLE: {
    status: 503,
    message: (p) => `${p.store} cannot be reached`,
    hint: 'Retry once the server is back (GET /readyz reports it); what was acknowledged before is kept'
  }
})
