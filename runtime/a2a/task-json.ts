/** A kept A2A task as the wire shows it. */
import type { Task } from './a2a-types.js'
import type { TaskRecord } from './task-records.js'

export function statusOf(t: TaskRecord): Task['status'] {
  return {
    state: t.state,
    ...(t.statusMessage !== undefined ? { message: t.statusMessage } : {}),
    timestamp: new Date(t.updatedAt).toISOString()
  }
}

/**
 * The task as the wire shows it. `historyLength` 0 leaves the history out, a positive one keeps
 * that many newest messages; artifacts are left out when `includeArtifacts` is false.
 */
export function taskJson(t: TaskRecord, historyLength?: number, includeArtifacts = true): Task {
  const out: Task = { id: t.id, contextId: t.contextId, status: statusOf(t) }
  if (includeArtifacts) out.artifacts = t.artifacts
  if (historyLength === undefined) out.history = t.history
  else if (historyLength > 0) out.history = t.history.slice(-historyLength)
  if (Object.keys(t.metadata).length > 0) out.metadata = t.metadata
  return out
}
