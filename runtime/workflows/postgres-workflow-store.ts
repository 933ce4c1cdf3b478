/**
 * Workflow manifests in PostgreSQL, shared by every node on the database: a workflow saved on one
 * node is listed, read and run on any other, and the optimistic version holds across nodes (two
 * nodes saving version 2 at once: one wins, the other gets WORKFLOW_VERSION_CONFLICT).
 */
import { textFits, type PostgresDb } from '../store/index.js'
import type { WorkflowManifest } from './workflow-manifest.js'
import { byName, next, versionConflict, type WorkflowStore } from './workflow-store.js'

/** The schema, one entry per version (`PostgresDb.migrate`). */
export const WORKFLOW_MIGRATIONS: readonly string[] = [
  `CREATE TABLE platform_workflows (
     id text COLLATE "C" PRIMARY KEY,
     version integer NOT NULL,
     manifest json NOT NULL
   )`
]

export class PostgresWorkflowStore implements WorkflowStore {
  readonly kind = 'postgres'

  constructor(private readonly db: PostgresDb) {}

  /** Creates or migrates the table. */
  async start(): Promise<void> {
    await this.db.migrate('workflows', WORKFLOW_MIGRATIONS)
  }

  async list(): Promise<WorkflowManifest[]> {
    const { rows } = await this.db.query<{ manifest: WorkflowManifest }>('SELECT manifest FROM platform_workflows')
    // sorted here, as the other stores sort: the database's collation never decides the order
    return rows.map((r) => r.manifest).sort(byName)
  }

  async find(id: string): Promise<WorkflowManifest | undefined> {
    if (!textFits(id)) return undefined
    const { rows } = await this.db.query<{ manifest: WorkflowManifest }>(
      'SELECT manifest FROM platform_workflows WHERE id = $1',
      [id]
    )
    return rows[0]?.manifest
  }

  /**
   * The stored row is locked while the version is checked and the new one written, so of two
   * nodes saving the same version one waits and then meets the other's. A new workflow has no row
   * to lock: of two first saves, the insert that comes second finds the first's row and conflicts.
   */
  async save(m: WorkflowManifest, principal: string): Promise<WorkflowManifest> {
    return this.db.transaction(async (sql) => {
      const { rows } = await sql.query<{ manifest: WorkflowManifest }>(
        'SELECT manifest FROM platform_workflows WHERE id = $1 FOR UPDATE',
        [m.id]
      )
      const stored = next(m, rows[0]?.manifest, principal)
      if (rows.length > 0) {
        await sql.query('UPDATE platform_workflows SET version = $2, manifest = $3 WHERE id = $1', [
          m.id,
          stored.version,
          JSON.stringify(stored)
        ])
        return stored
      }
      const { rowCount } = await sql.query(
        'INSERT INTO platform_workflows (id, version, manifest) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING',
        [m.id, stored.version, JSON.stringify(stored)]
      )
      if ((rowCount ?? 0) > 0) return stored
      const { rows: won } = await sql.query<{ version: number }>(
        'SELECT version FROM platform_workflows WHERE id = $1',
        [m.id]
      )
      throw versionConflict(m.id, m.version, won[0]?.version ?? 0)
    })
  }

  async delete(id: string): Promise<boolean> {
    if (!textFits(id)) return false
    const { rowCount } = await this.db.query('DELETE FROM platform_workflows WHERE id = $1', [id])
    return (rowCount ?? 0) > 0
  }
}
