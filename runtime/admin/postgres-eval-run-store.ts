/**
 * Eval runs in PostgreSQL, shared by every node on the database: a run recorded through one node
 * is listed and summarised on any other. Ids and baselines are labels of ASCII characters and
 * timestamps ISO-8601 strings, so the "C" collation orders them as the other stores do.
 */
import { PlatformError } from '../contracts/index.js'
import { textFits, type PostgresDb } from '../store/index.js'
import { ADMIN_ERRORS } from './errors.js'
import type { BaselineSummary, EvalRun } from './eval-run.js'
import type { EvalRunStore } from './eval-run-store.js'

/** The schema, one entry per version (`PostgresDb.migrate`). */
export const EVAL_MIGRATIONS: readonly string[] = [
  `CREATE TABLE platform_eval_runs (
     id text COLLATE "C" PRIMARY KEY,
     baseline text COLLATE "C" NOT NULL,
     ts text COLLATE "C" NOT NULL,
     passed boolean NOT NULL,
     run json NOT NULL
   );
   CREATE INDEX platform_eval_runs_baseline ON platform_eval_runs (baseline, ts DESC, id DESC);
   CREATE INDEX platform_eval_runs_newest ON platform_eval_runs (ts DESC, id DESC);`
]

export class PostgresEvalRunStore implements EvalRunStore {
  readonly kind = 'postgres'

  constructor(
    private readonly db: PostgresDb,
    readonly cap: number
  ) {}

  /** Creates or migrates the table. */
  async start(): Promise<void> {
    await this.db.migrate('evals', EVAL_MIGRATIONS)
  }

  async list(baseline?: string, limit = Infinity): Promise<EvalRun[]> {
    if (baseline !== undefined && !textFits(baseline)) return []
    const max = Number.isFinite(limit) ? limit : null
    const { rows } =
      baseline === undefined
        ? await this.db.query<{ run: EvalRun }>(
            'SELECT run FROM platform_eval_runs ORDER BY ts DESC, id DESC LIMIT $1',
            [max]
          )
        : await this.db.query<{ run: EvalRun }>(
            'SELECT run FROM platform_eval_runs WHERE baseline = $1 ORDER BY ts DESC, id DESC LIMIT $2',
            [baseline, max]
          )
    return rows.map((r) => r.run)
  }

  async find(id: string): Promise<EvalRun | undefined> {
    if (!textFits(id)) return undefined
    const { rows } = await this.db.query<{ run: EvalRun }>('SELECT run FROM platform_eval_runs WHERE id = $1', [id])
    return rows[0]?.run
  }

  /**
   * The insert and the baseline's eviction commit together, under the baseline's advisory lock:
   * saves on several nodes take turns, so the cap holds at every commit.
   */
  async save(run: EvalRun): Promise<void> {
    const stored = await this.db.transaction(async (sql) => {
      await sql.query(`SELECT pg_advisory_xact_lock(hashtextextended('platform_eval_runs:' || $1, 0))`, [run.baseline])
      const { rowCount } = await sql.query(
        `INSERT INTO platform_eval_runs (id, baseline, ts, passed, run) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO NOTHING`,
        [run.id, run.baseline, run.timestamp, run.passed, JSON.stringify(run)]
      )
      if ((rowCount ?? 0) === 0) return false
      await sql.query(
        `DELETE FROM platform_eval_runs WHERE id IN (
           SELECT id FROM platform_eval_runs WHERE baseline = $1 ORDER BY ts DESC, id DESC OFFSET $2)`,
        [run.baseline, this.cap]
      )
      return true
    })
    if (!stored) throw new PlatformError(ADMIN_ERRORS.EVAL_RUN_EXISTS, { id: run.id })
  }

  async delete(id: string): Promise<boolean> {
    if (!textFits(id)) return false
    const { rowCount } = await this.db.query('DELETE FROM platform_eval_runs WHERE id = $1', [id])
    return (rowCount ?? 0) > 0
  }

  /** One aggregate over the table; the same figures `summarize` gives the other stores. */
  async baselines(): Promise<BaselineSummary[]> {
    const { rows } = await this.db.query<{
      baseline: string
      total: string
      passed: string
      last_ts: string
      last_passed: boolean
    }>(
      `SELECT baseline, count(*) AS total, count(*) FILTER (WHERE passed) AS passed,
              (array_agg(ts ORDER BY ts DESC, id DESC))[1] AS last_ts,
              (array_agg(passed ORDER BY ts DESC, id DESC))[1] AS last_passed
         FROM platform_eval_runs GROUP BY baseline ORDER BY baseline`
    )
    return rows.map((r) => {
      const total = Number(r.total)
      const passed = Number(r.passed)
      return {
        baseline: r.baseline,
        total,
        passed,
        passRate: Math.round((passed / total) * 100) / 100,
        lastRunAt: r.last_ts,
        lastVerdict: r.last_passed
      }
    })
  }
}
