/**
 * The configuration keys the A2A area owns; `runtime/areas.ts` gathers them with the others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

const { bool, nonEmpty, positiveInt } = KEY_SCHEMA

export const A2A_CONFIG_KEYS = {
  'platform.a2a.enabled': {
    schema: bool,
    default: true,
    description:
      'Serve every agent over A2A 1.0 (JSON-RPC) at `{agent path}/a2a`, with its Agent Card at `{agent path}/.well-known/agent-card.json`'
  },
  'platform.a2a.max-tasks': {
    schema: positiveInt,
    default: 10_000,
    description:
      "A2A tasks kept at once; at the cap the oldest finished anonymous task, else the caller's own oldest finished task, is forgotten to make room; while there is neither a new message is refused (-32603, HTTP 503)"
  },
  'platform.a2a.tasks.max-per-principal': {
    schema: positiveInt,
    default: 1000,
    description:
      'A2A tasks one authenticated principal keeps at once; beyond it the principal forgets its own oldest finished task, and while all of them still run a new message is refused (-32603, HTTP 429)'
  },
  'platform.a2a.tasks.max-per-address': {
    schema: positiveInt,
    default: 100,
    description:
      'A2A tasks anonymous callers from one client address (an IPv6 /64) keep at once; beyond it their oldest finished task is forgotten, and while all of them still run a new message is refused (-32603, HTTP 429)'
  },
  'platform.a2a.tasks.authenticated-reserve': {
    schema: { type: 'integer', minimum: 0 },
    description:
      'A2A tasks of platform.a2a.max-tasks kept for authenticated principals (unset: a tenth of it): anonymous callers keep at most max-tasks minus this many; beyond it their oldest finished task is forgotten, and while all of them still run a new anonymous message is refused (-32603, HTTP 503)'
  },
  'platform.a2a.task-retention-ms': {
    schema: positiveInt,
    default: 300_000,
    description:
      'A terminal A2A task (completed, failed, canceled, rejected) is forgotten this long after it was created'
  },
  'platform.a2a.all-tasks-role': {
    schema: nonEmpty,
    description:
      "Role whose holders see, list and cancel every caller's A2A tasks on an agent's endpoint; without it each caller sees only its own"
  },
  'platform.a2a.public-url': {
    schema: { type: 'string', pattern: '^https?://[^/]+' },
    description:
      "Origin the Agent Cards name in `supportedInterfaces` (e.g. `https://agents.example.com`, behind a proxy); unset: `http://` and the request's Host"
  },
  'platform.a2a.push.max-configs-per-task': {
    // 0.3's list has no pages: this cap is what bounds its answer
    schema: { type: 'integer', minimum: 1, maximum: 100 },
    default: 10,
    description: 'Push notification configs one A2A task keeps (at most 100); one more is refused (-32602)'
  },
  'platform.a2a.push.max-configs-per-principal': {
    schema: positiveInt,
    default: 100,
    description:
      'Push notification configs one principal (anonymous callers: one client address) keeps over all its tasks; one more is refused (-32602). A forgotten task takes its configs with it'
  },
  'platform.a2a.root-agent': {
    schema: nonEmpty,
    description:
      'Agent whose card `/.well-known/agent-card.json` at the host root serves; unset: the only agent when exactly one is loaded, else 404'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof A2A_CONFIG_KEYS> {}
}
