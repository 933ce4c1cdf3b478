import type { AdminRoute } from './route-table.js'

/** What the admin area offers other areas: its route table (fleet and A2A views come in at its extension points). */
export interface AdminService {
  /** Every admin route as declared (method, path, schemas, gate), in mount order. */
  readonly routes: readonly AdminRoute[]
}
