import type { AdminRoute } from '../admin/index.js'

/** What the workflows area offers: the admin routes it serves (manifests, runs, approvals). */
export interface WorkflowsService {
  /** Every workflow route as declared (method, path, schemas, gate), in mount order. */
  readonly routes: readonly AdminRoute[]
}
