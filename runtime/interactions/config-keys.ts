/**
 * The configuration keys the interactions area owns; `runtime/areas.ts` gathers them with the
 * others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

const { bool, nonEmpty, positiveInt } = KEY_SCHEMA

export const INTERACTIONS_CONFIG_KEYS = {
  'platform.interactions.enabled': {
    schema: bool,
    default: true,
    description: 'Serve the interactions API (`/api/interactions`); off: its routes answer 404'
  },
  'platform.interactions.http-write-enabled': {
    schema: bool,
    default: false,
    description: 'Gate for create, continue, cancel and delete (403 while off); writes also need a principal (401)'
  },
  'platform.interactions.demo-principal': {
    schema: nonEmpty,
    description:
      'Fixed principal of interactions requests that carry none, for demos only; never in production (start-up logs a warning whenever it is set)'
  },
  'platform.interactions.sync-timeout-ms': {
    schema: positiveInt,
    default: 120_000,
    description:
      'A synchronous (non-background) interaction still running after this is FAILED `timed out after <ISO duration>`'
  },
  'platform.interactions.max-steps': {
    schema: positiveInt,
    default: 1000,
    description: 'Most non-terminal steps kept per interaction; `usage`, `completion` and `error` steps are always kept'
  },
  'platform.interactions.quota.runs-in-flight': {
    schema: { type: 'integer', minimum: 0 },
    default: 32,
    description:
      'Interactions one principal may have running at once (0: no limit); one more is refused with 429 and Retry-After'
  },
  'platform.interactions.quota.bytes-per-minute': {
    schema: { type: 'integer', minimum: 0 },
    default: 4_194_304,
    description:
      'Request bytes (create and continue bodies) one principal may send per minute, a minute of it at once (0: no limit); beyond it 429 with Retry-After'
  },
  'platform.interactions.text-coalesce-ms': {
    schema: { type: 'integer', minimum: 0 },
    default: 50,
    description:
      'Text deltas arriving within this window become one `text` step (flushed early by any other step); 0 records each delta as its own step'
  },
  'platform.interactions.idempotency.max-keys': {
    schema: positiveInt,
    default: 10_000,
    description:
      'Idempotency-Key entries kept in the process, for first requests in flight and `store: false` interactions (all principals together; the oldest go first); stored interactions keep their keys in the store'
  },
  'platform.interactions.idempotency.ttl-seconds': {
    schema: positiveInt,
    default: 86_400,
    description:
      'How long an Idempotency-Key is remembered after its first request; it is stored with its interaction, so it survives a restart'
  },
  'platform.interactions.stream.stall-seconds': {
    schema: positiveInt,
    default: 30,
    description:
      'A live stream whose client has read nothing for this long while steps wait is closed (WebSocket 1008 slow consumer); the client resumes after its last seq'
  },
  'platform.interactions.store': {
    schema: { enum: ['memory', 'lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      'Where interactions and their steps are kept: `lmdb` (named databases of the data directory; an acknowledged step survives a crash), `postgres` (needs `platform.postgres.url` or `platform.interactions.postgres.url`) or `memory` (in the process, lost on restart). In cluster mode the default is `postgres`'
  },
  'platform.interactions.lmdb.pack-ended': {
    schema: bool,
    default: false,
    description:
      "For store `lmdb`: once a run has ended, move its step records into one compressed record (a third of the bytes at rest or less, where step records take about 1.6x the steps' JSON, for about a fifth more CPU per streamed step); a run that ended while it was off stays as it is"
  },
  'platform.interactions.lmdb.group-commit-ms': {
    schema: { type: 'integer', minimum: 0, maximum: 1000 },
    default: 10,
    description:
      'For store `lmdb`: the least time between two commits of streamed steps. Steps made meanwhile wait and go in one commit, a record per run, so a busy store pays a commit, a put and a socket write per viewer for several steps of a run rather than each (about a fifth of the CPU per live step with 200 runs streaming); a step made after a quiet spell is written at once. A step is still acknowledged, and sent to viewers, only once its commit is durable (0: a commit as soon as the one before landed)'
  },
  'platform.interactions.postgres.url': {
    schema: nonEmpty,
    secret: true,
    description:
      'For store `postgres`: connection string overriding `platform.postgres.url` for interactions, e.g. `postgres://user:pass@127.0.0.1:5432/platform` (a `host=/dir` query names a unix socket directory)'
  },
  'platform.interactions.postgres.pool-size': {
    schema: { type: 'integer', minimum: 1, maximum: 1000 },
    default: 10,
    description:
      'For store `postgres`: connections kept open at most (when unset, `platform.postgres.pool-size`); more queries at once wait for one'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof INTERACTIONS_CONFIG_KEYS> {}
}
