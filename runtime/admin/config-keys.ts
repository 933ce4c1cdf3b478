/**
 * The configuration keys the admin area (its MCP tools, event stream, eval store)
 * owns; `runtime/areas.ts` gathers them with the others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

const { bool, nonEmpty, positiveInt } = KEY_SCHEMA

export const ADMIN_CONFIG_KEYS = {
  'platform.admin.mcp-tools': {
    schema: bool,
    default: true,
    description:
      'Register the read-only admin MCP tools (`platform_overview`, `platform_list_*`, ...) on `/platform/mcp`'
  },
  'platform.admin.mcp-write-tools': {
    schema: bool,
    default: false,
    description:
      'Register the write admin MCP tools (`platform_broadcast`, `platform_disconnect_resource`, `platform_destroy_broadcaster`, `platform_cancel_task`), each through the admin write gate'
  },
  'platform.admin.events.replay': {
    schema: { type: 'integer', minimum: 0, maximum: 100_000 },
    default: 200,
    description:
      'Admin events kept for replay: a new `/platform/admin/events` subscriber gets the last this many, `?after=<seq>` resumes within them'
  },
  'platform.admin.events.batch-ms': {
    schema: { type: 'integer', minimum: 0, maximum: 1000 },
    default: 50,
    description:
      'Admin events are sent to subscribers at most this often, one message per event, a batch in one corked write per subscriber (0: once per event-loop turn)'
  },
  'platform.admin.cluster.heartbeat-ms': {
    schema: { type: 'integer', minimum: 50, maximum: 60_000 },
    default: 1000,
    description:
      'How often this node sends its heartbeat to the other nodes; a node that misses 3 in a row is shown down in `GET /api/admin/cluster`'
  },
  'platform.admin.evals.store': {
    schema: { enum: ['memory', 'lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      'EvalRunStore: `lmdb` keeps eval runs across restarts, `postgres` shares them with every node on `platform.postgres.url`, `memory` for the life of the process. In cluster mode the default is `postgres`'
  },
  'platform.admin.evals.max-runs-per-baseline': {
    schema: positiveInt,
    default: 500,
    description: 'Eval runs kept per baseline; the oldest by timestamp is evicted beyond it'
  },
  'platform.mcp-sandbox-origin': {
    schema: nonEmpty,
    description: 'Distinct origin that renders MCP Apps through a proxy frame',
    reservedFor: 'admin'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof ADMIN_CONFIG_KEYS> {}
}
