/**
 * EvalRunStore: recorded eval runs, at most `cap` per baseline (the oldest by timestamp evicted),
 * immutable (a second save of an id is refused). In memory, in LMDB so runs survive a restart, or
 * in PostgreSQL (`postgres-eval-run-store.ts`) so every node sees the same. Reads are async: a store
 * every node shares is read where it is kept, never from a copy that may be stale.
 */
import type { Database } from 'lmdb'
import { PlatformError } from '../contracts/index.js'
import { ADMIN_ERRORS } from './errors.js'
import { newestFirst, summarize, type BaselineSummary, type EvalRun } from './eval-run.js'

export interface EvalRunStore {
  /** Newest first, of one baseline or all, at most `limit`. */
  list(baseline?: string, limit?: number): Promise<EvalRun[]>
  find(id: string): Promise<EvalRun | undefined>
  /** Stores a new run (EVAL_RUN_EXISTS for a known id), evicting the baseline's oldest beyond the cap. */
  save(run: EvalRun): Promise<void>
  delete(id: string): Promise<boolean>
  baselines(): Promise<BaselineSummary[]>
}

export class MemoryEvalRunStore implements EvalRunStore {
  private readonly runs = new Map<string, EvalRun>()
  /** Per baseline, newest first. */
  private readonly byBaseline = new Map<string, EvalRun[]>()

  constructor(readonly cap: number) {}

  async list(baseline?: string, limit = Infinity): Promise<EvalRun[]> {
    const src =
      baseline !== undefined ? (this.byBaseline.get(baseline) ?? []) : [...this.runs.values()].sort(newestFirst)
    return src.slice(0, limit)
  }

  async find(id: string): Promise<EvalRun | undefined> {
    return this.runs.get(id)
  }

  async save(run: EvalRun): Promise<void> {
    if (this.runs.has(run.id)) throw new PlatformError(ADMIN_ERRORS.EVAL_RUN_EXISTS, { id: run.id })
    this.runs.set(run.id, run)
    let list = this.byBaseline.get(run.baseline)
    if (list === undefined) this.byBaseline.set(run.baseline, (list = []))
    list.push(run)
    list.sort(newestFirst)
    while (list.length > this.cap) this.runs.delete(list.pop()!.id)
  }

  async delete(id: string): Promise<boolean> {
    const run = this.runs.get(id)
    if (run === undefined) return false
    this.runs.delete(id)
    const list = this.byBaseline.get(run.baseline)!
    list.splice(list.indexOf(run), 1)
    if (list.length === 0) this.byBaseline.delete(run.baseline)
    return true
  }

  async baselines(): Promise<BaselineSummary[]> {
    return summarize(this.runs.values())
  }
}

/** Key of the per-baseline index: `[baseline, timestamp, id]` sorts a baseline's runs oldest first. */
export type EvalIndexKey = [string, string, string]

export class LmdbEvalRunStore implements EvalRunStore {
  constructor(
    private readonly runs: Database<EvalRun, string>,
    private readonly index: Database<true, EvalIndexKey>,
    readonly cap: number
  ) {}

  async list(baseline?: string, limit = Infinity): Promise<EvalRun[]> {
    if (baseline === undefined)
      return [...this.runs.getRange().map(({ value }) => value)].sort(newestFirst).slice(0, limit)
    const out: EvalRun[] = []
    for (const { key } of this.index.getRange({ start: [baseline, '\uffff'], end: [baseline, ''], reverse: true })) {
      if (out.length >= limit) break
      const r = this.runs.get(key[2])
      if (r !== undefined) out.push(r)
    }
    return out.sort(newestFirst)
  }

  async find(id: string): Promise<EvalRun | undefined> {
    return this.runs.get(id)
  }

  async save(run: EvalRun): Promise<void> {
    const stored = await this.runs.transaction(() => {
      if (this.runs.doesExist(run.id)) return false
      void this.runs.put(run.id, run)
      void this.index.put([run.baseline, run.timestamp, run.id], true)
      const keys = [...this.index.getKeys({ start: [run.baseline, ''], end: [run.baseline, '\uffff'] })]
      for (let i = 0; i < keys.length - this.cap; i++) {
        void this.index.remove(keys[i]!)
        void this.runs.remove(keys[i]![2])
      }
      return true
    })
    if (!stored) throw new PlatformError(ADMIN_ERRORS.EVAL_RUN_EXISTS, { id: run.id })
  }

  async delete(id: string): Promise<boolean> {
    return this.runs.transaction(() => {
      const run = this.runs.get(id)
      if (run === undefined) return false
      void this.runs.remove(id)
      void this.index.remove([run.baseline, run.timestamp, run.id])
      return true
    })
  }

  async baselines(): Promise<BaselineSummary[]> {
    return summarize(this.runs.getRange().map(({ value }) => value))
  }
}
