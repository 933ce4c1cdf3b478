/**
 * parallel, pipeline and vote over single dispatches. Each is one coordination step in the
 * journal: CoordinationStarted (a root), the dispatches under it, CoordinationCompleted under it.
 */
import { Cancellation } from '../plugins/index.js'
import { failedResult } from '../contracts/index.js'
import type { AgentCall, AgentResult, DispatchContext, FleetDispatcher } from './fleet-types.js'
import type { JournalWriter } from './journal-writer.js'

export const SIBLING_CANCELLED = 'Sibling cancelled after peer failure'

type One = (ctx: DispatchContext, call: AgentCall) => Promise<AgentResult>

/** Keys of parallel results: the agent's name, `name#2` for its second call, and so on. */
export function resultKeys(calls: AgentCall[]): string[] {
  const seen = new Map<string, number>()
  return calls.map((c) => {
    const n = (seen.get(c.agent) ?? 0) + 1
    seen.set(c.agent, n)
    return n === 1 ? c.agent : `${c.agent}#${n}`
  })
}

/** The answer a vote counts: trimmed and lower-cased. */
export const ballot = (text: string): string => text.trim().toLowerCase()

export function dispatchPatterns(
  journal: JournalWriter,
  one: One
): Pick<FleetDispatcher, 'parallel' | 'pipeline' | 'vote'> {
  /** Runs `body` as one coordination step under a CoordinationStarted root. */
  async function step<T>(
    ctx: DispatchContext,
    calls: AgentCall[],
    body: (sub: DispatchContext) => Promise<T>
  ): Promise<T> {
    const t0 = performance.now()
    const started = journal.emit(ctx.coordinationId, ctx.parentEventId ?? null, 'CoordinationStarted', {
      coordinatorName: ctx.coordinator
    })
    try {
      return await body({ ...ctx, parentEventId: started })
    } finally {
      journal.emit(ctx.coordinationId, started, 'CoordinationCompleted', {
        totalDurationMs: Math.round(performance.now() - t0),
        agentCallCount: calls.length
      })
    }
  }

  /** Never rejects: an unexpected throw becomes the call's failed result. */
  const guarded = (ctx: DispatchContext, call: AgentCall, what: string): Promise<AgentResult> =>
    one(ctx, call).catch((err: unknown) =>
      failedResult(call, `${what} call failed: ${err instanceof Error ? err.message : String(err)}`)
    )

  return {
    async parallel(ctx, calls) {
      if (calls.length === 0) throw new TypeError('parallel requires at least one call')
      return await step(ctx, calls, async (sub) => {
        // the first failure cancels the siblings still running; the coordinator's cancel cancels all
        const group = new Cancellation()
        const parent = ctx.signal
        const onParent = (): void => group.abort((parent as { reason?: unknown }).reason)
        if (parent?.aborted === true) onParent()
        else parent?.addEventListener('abort', onParent, { once: true })
        try {
          const results = await Promise.all(
            calls.map(async (c) => {
              const r = await guarded({ ...sub, signal: group }, c, 'Parallel')
              if (!r.success && !group.aborted) group.abort(SIBLING_CANCELLED)
              return r
            })
          )
          const keys = resultKeys(calls)
          return Object.fromEntries(keys.map((k, i) => [k, results[i]!]))
        } finally {
          parent?.removeEventListener('abort', onParent)
        }
      })
    },

    async pipeline(ctx, calls) {
      if (calls.length === 0) throw new TypeError('pipeline requires at least one call')
      return await step(ctx, calls, async (sub) => {
        const out: AgentResult[] = []
        let previous: AgentResult | undefined
        for (const c of calls) {
          const call = previous === undefined ? c : { ...c, args: { ...c.args, _previous_result: previous.text } }
          previous = await guarded(sub, call, 'Pipeline')
          out.push(previous)
          if (!previous.success) break
        }
        return out
      })
    },

    async vote(ctx, calls) {
      if (calls.length === 0) throw new TypeError('vote() requires at least one AgentCall')
      return await step(ctx, calls, async (sub) => {
        // peers answer independently: one failing cancels nobody
        const results = await Promise.all(calls.map((c) => guarded(sub, c, 'Vote')))
        const counts = new Map<string, { count: number; first: number }>()
        results.forEach((r, i) => {
          if (!r.success) return
          const k = ballot(r.text)
          const c = counts.get(k)
          if (c === undefined) counts.set(k, { count: 1, first: i })
          else c.count++
        })
        if (counts.size === 0)
          return {
            agentName: 'vote',
            skillId: calls[0]!.skill,
            text: `All ${calls.length} peer(s) failed`,
            metadata: { failures: results.map((r) => ({ agent: r.agentName, error: r.text })) },
            durationMs: Math.max(...results.map((r) => r.durationMs)),
            success: false
          }
        // the most votes; among equals, the cohort whose first voter came first
        let best: { count: number; first: number } | undefined
        for (const c of counts.values())
          if (best === undefined || c.count > best.count || (c.count === best.count && c.first < best.first)) best = c
        const winner = results[best!.first]!
        return {
          ...winner,
          metadata: {
            ...winner.metadata,
            votes: best!.count,
            voters: results.filter((r) => r.success).length,
            cohorts: counts.size
          }
        }
      })
    }
  }
}
