/** Eval runs a CI pipeline records, and the pass rate per baseline. */
import { PlatformError } from '../contracts/index.js'
import { parseEvalRun } from './eval-run.js'
import type { EvalRunStore } from './eval-run-store.js'
import type { AdminRoute } from './route-table.js'
import { ADMIN_ERRORS } from './errors.js'

export const EVAL_RUNS_DEFAULT_LIMIT = 100
export const EVAL_RUNS_MAX_LIMIT = 10_000

function idOf(body: unknown): string {
  const id = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).id : undefined
  return typeof id === 'string' ? id : ''
}

export function evalRoutes(store: EvalRunStore): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/evals/runs',
      summary: 'Recorded eval runs, newest first, of one baseline or all',
      // a run holds the prompt and the judge's raw response: content
      gate: { read: 'content' },
      query: {
        type: 'object',
        properties: {
          baseline: { type: 'string', minLength: 1 },
          limit: { type: 'integer', minimum: 1, maximum: EVAL_RUNS_MAX_LIMIT, default: EVAL_RUNS_DEFAULT_LIMIT }
        }
      },
      handler: ({ query }) => store.list(query.baseline as string | undefined, query.limit as number)
    },
    {
      method: 'POST',
      path: '/evals/runs',
      summary: 'Records an eval run (immutable: a known id is refused)',
      gate: { write: 'evals.write', target: (r) => idOf(r.body) },
      handler: async ({ body }) => {
        const run = parseEvalRun(body)
        await store.save(run)
        return { id: run.id, baseline: run.baseline, passed: run.passed }
      }
    },
    {
      method: 'GET',
      path: '/evals/runs/{id}',
      summary: 'One eval run',
      gate: { read: 'content' },
      handler: async ({ params }) => {
        const run = await store.find(params.id!)
        if (run === undefined) throw new PlatformError(ADMIN_ERRORS.UNKNOWN_EVAL_RUN, { id: params.id })
        return run
      }
    },
    {
      method: 'DELETE',
      path: '/evals/runs/{id}',
      summary: 'Deletes an eval run',
      gate: { write: 'evals.delete', target: (r) => r.params.id ?? '' },
      handler: async ({ params }) => {
        if (!(await store.delete(params.id!))) throw new PlatformError(ADMIN_ERRORS.UNKNOWN_EVAL_RUN, { id: params.id })
        return { deleted: params.id }
      }
    },
    {
      method: 'GET',
      path: '/evals/baselines',
      summary:
        'Pass rate per baseline: {baseline, total, passed, passRate, lastRunAt, lastVerdict}, sorted by baseline',
      gate: { read: 'open' },
      handler: () => store.baselines()
    }
  ]
}
