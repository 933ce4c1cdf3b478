/** The A2A tasks as the admin surface shows them (behind its content gate): every caller's, with the admin's cancel. */
import type { TaskInfo, TaskView } from '../admin/index.js'
import type { TaskRecord, TaskStore } from './task-store.js'

function infoOf(t: TaskRecord): TaskInfo {
  return {
    taskId: t.id,
    contextId: t.contextId,
    state: t.state,
    statusMessage: t.statusMessage?.parts.map((p) => p.text ?? '').join('') ?? '',
    createdAt: new Date(t.createdAt).toISOString(),
    messageCount: t.history.length,
    artifactCount: t.artifacts.length,
    metadata: {
      ...t.metadata,
      agent: t.agent,
      owner: t.owner,
      ...(t.caller.address !== undefined ? { address: t.caller.address } : {})
    }
  }
}

export function taskView(store: TaskStore): TaskView {
  return {
    tasks: async (contextId) => (await store.all(contextId)).map(infoOf),
    task: async (id) => {
      const t = await store.get(id)
      return t === undefined ? undefined : infoOf(t)
    },
    cancelTask: async (id) => (await store.cancel(id))?.canceled,
    get taskCount() {
      return store.size
    }
  }
}
