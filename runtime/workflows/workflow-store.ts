/**
 * WorkflowStore: workflow manifests with optimistic versions (a save must carry the stored version
 * + 1, a new workflow version 1). In memory, in LMDB (the default) so workflows survive a restart,
 * or in PostgreSQL (`postgres-workflow-store.ts`) so every node sees the same. Reads are async: a
 * store every node shares is read where it is kept, never from a copy that may be stale.
 */
import type { Database } from 'lmdb'
import { PlatformError } from '../contracts/index.js'
import type { WorkflowManifest } from './workflow-manifest.js'
import { WORKFLOWS_ERRORS } from './errors.js'

/** The WORKFLOW_VERSION_CONFLICT a save of `id` at `sent` meets over `stored`; its body names the stored version. */
export function versionConflict(id: string, sent: number, stored: number): PlatformError {
  return new PlatformError(
    WORKFLOWS_ERRORS.WORKFLOW_VERSION_CONFLICT,
    {
      detail: `workflow ${id} version conflict: caller sent v${sent}, server has v${stored} (expected v${stored + 1})`
    },
    { extra: { kind: 'VERSION_CONFLICT', storedVersion: stored } }
  )
}

export interface WorkflowStore {
  /** Ordered by lower-cased name (then id). */
  list(): Promise<WorkflowManifest[]>
  find(id: string): Promise<WorkflowManifest | undefined>
  /**
   * Stores `m` if its version is the stored one + 1 (WORKFLOW_VERSION_CONFLICT otherwise), keeping the stored
   * createdAt and createdBy on an update; returns what was stored.
   */
  save(m: WorkflowManifest, principal: string): Promise<WorkflowManifest>
  delete(id: string): Promise<boolean>
}

export function byName(a: WorkflowManifest, b: WorkflowManifest): number {
  const x = a.name.toLowerCase()
  const y = b.name.toLowerCase()
  return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** The manifest to store over `stored`, or WORKFLOW_VERSION_CONFLICT. */
export function next(m: WorkflowManifest, stored: WorkflowManifest | undefined, principal: string): WorkflowManifest {
  const have = stored?.version ?? 0
  if (m.version !== have + 1) throw versionConflict(m.id, m.version, have)
  const now = new Date().toISOString()
  return {
    ...m,
    createdBy: stored?.createdBy ?? (m.createdBy !== '' ? m.createdBy : principal),
    createdAt: stored?.createdAt ?? now,
    updatedAt: now
  }
}

export class MemoryWorkflowStore implements WorkflowStore {
  private readonly items = new Map<string, WorkflowManifest>()

  async list(): Promise<WorkflowManifest[]> {
    return [...this.items.values()].sort(byName)
  }

  async find(id: string): Promise<WorkflowManifest | undefined> {
    return this.items.get(id)
  }

  async save(m: WorkflowManifest, principal: string): Promise<WorkflowManifest> {
    const stored = next(m, this.items.get(m.id), principal)
    this.items.set(m.id, stored)
    return stored
  }

  async delete(id: string): Promise<boolean> {
    return this.items.delete(id)
  }
}

export class LmdbWorkflowStore implements WorkflowStore {
  constructor(private readonly db: Database<WorkflowManifest, string>) {}

  async list(): Promise<WorkflowManifest[]> {
    return [...this.db.getRange().map(({ value }) => value)].sort(byName)
  }

  async find(id: string): Promise<WorkflowManifest | undefined> {
    return this.db.get(id)
  }

  /** The version check and the write commit together: two racing saves of v2 cannot both win. */
  async save(m: WorkflowManifest, principal: string): Promise<WorkflowManifest> {
    return this.db.transaction(() => {
      const stored = next(m, this.db.get(m.id), principal)
      void this.db.put(m.id, stored)
      return stored
    })
  }

  async delete(id: string): Promise<boolean> {
    return this.db.transaction(() => {
      if (!this.db.doesExist(id)) return false
      void this.db.remove(id)
      return true
    })
  }
}
