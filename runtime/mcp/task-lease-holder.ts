/**
 * What the lease keeper asks of an MCP task manager sharing a Postgres store: the tasks this node
 * runs, a task it no longer holds, and a task of a lost node it ended.
 */
import type { EventBus } from '../events/index.js'
import { TaskLeaseKeeper, type TaskLeaseHolder } from '../store/index.js'
import type { LostTask, PostgresTasks } from './postgres-tasks.js'
import { TERMINAL, refresh, type Task } from './task-record.js'

/** Starts the lease rounds of the tasks of `tasks` this node runs, until the keeper is stopped. */
export function keepLeases(
  tasks: Map<string, Task>,
  store: PostgresTasks,
  warn: (err: unknown, what: string) => void,
  bus: EventBus,
  adopt: (t: Task) => Promise<void>
): TaskLeaseKeeper<LostTask> {
  return new TaskLeaseKeeper(store, leaseHolder(tasks, store, bus, adopt), warn)
}

/** `adopt` stops a run of this node and gives its task the end the store holds. */
export function leaseHolder(
  tasks: Map<string, Task>,
  store: PostgresTasks,
  bus: EventBus,
  adopt: (t: Task) => Promise<void>
): TaskLeaseHolder<LostTask> {
  const own = (id: string): Task | undefined => {
    const t = tasks.get(id)
    // only a handed-out task is in the store: one inside its sync window holds no lease
    return t !== undefined && t.durable === true && t.remote === undefined && !TERMINAL.has(t.status) ? t : undefined
  }
  return {
    running: () => [...tasks.keys()].filter((id) => own(id) !== undefined),
    lostHere: async (id) => {
      // a renewal racing the task's first write finds no row yet: only a kept end stops the run
      const kept = await store.load(id)
      const t = own(id)
      if (t !== undefined && kept !== undefined && TERMINAL.has(kept.rec.status)) await adopt(t)
    },
    ended: async ({ rec, from }) => {
      // this node's own task, its lease lapsed while it was paused: the run stops with the end written
      const t = own(rec.id)
      if (t !== undefined) return adopt(t)
      bus.emit('TaskStateChanged', { taskId: rec.id, oldState: from, newState: rec.status, protocol: 'mcp' })
      const copy = tasks.get(rec.id)
      if (copy?.remote !== undefined) refresh(copy, rec)
    }
  }
}
