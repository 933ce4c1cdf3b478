/**
 * The configuration keys the fleet area (coordination journal, circuit breakers, remote A2A agents)
 * owns; `runtime/areas.ts` gathers them with the others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

const { nonEmpty, positiveInt } = KEY_SCHEMA

export const FLEET_CONFIG_KEYS = {
  'platform.fleet.journal.store': {
    schema: { enum: ['memory', 'lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      'Coordination journal: `lmdb` keeps events across restarts and crashes, `postgres` shares them with every node on `platform.postgres.url`, `memory` for the life of the process. In cluster mode the default is `postgres`'
  },
  'platform.fleet.journal.max-events': {
    schema: positiveInt,
    default: 100_000,
    description: 'Coordination journal events kept; beyond it the oldest go first'
  },
  'platform.fleet.journal.flush-ms': {
    schema: { type: 'integer', minimum: 0, maximum: 60_000 },
    default: 10,
    description:
      'How long journal events wait for more before they are written together (0: at the end of each event-loop turn). Each write is a commit, whose cost is paid per write, not per event; a dispatch never waits for it, and a read of the journal writes what waits first'
  },
  'platform.fleet.circuit-breaker.failure-threshold': {
    schema: positiveInt,
    default: 5,
    description:
      'Consecutive failed calls of one agent by one coordinator that open its circuit (fleet refs with `circuitBreaker: true`)'
  },
  'platform.fleet.circuit-breaker.open-ms': {
    schema: positiveInt,
    default: 30_000,
    description: 'How long an open circuit fails calls fast before one probe call is let through (half-open)'
  },
  'platform.a2a.remote-agents': {
    schema: {
      type: 'object',
      propertyNames: nonEmpty,
      additionalProperties: { type: 'string', pattern: '^https?://' }
    },
    default: {},
    description:
      "Agents other servers host, by name: the URL of each one's A2A JSON-RPC endpoint, which fleet calls reach over A2A; `AGENT_<NAME>_URL` in the environment wins"
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof FLEET_CONFIG_KEYS> {}
}
