/**
 * The core's configuration keys: those the `Platform` itself and the core areas read (server, log
 * level, data directory, auth, the write and read gates' `platform.admin.*` keys, plugins and their
 * sandbox), plus the keys two feature areas read where neither depends on the other. Every feature
 * area declares its own keys in its folder. `ConfigKeys`, the type of each key's value, starts here
 * and each area extends it, so `Config.get` needs no casts.
 */
import { NODE_ID } from '../contracts/index.js'
import { KEY_SCHEMA, type KeyDefs, type KeyValues, type SchemaValue } from './key-def.js'

const { bool, nonEmpty, port, positiveInt, strList } = KEY_SCHEMA

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const

const tokenEntry = {
  type: 'object',
  additionalProperties: false,
  required: ['principal'],
  oneOf: [{ required: ['token'] }, { required: ['sha256'] }],
  properties: {
    token: { type: 'string', minLength: 16 },
    sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
    principal: nonEmpty,
    roles: strList
  }
} as const

/** What an operator grants one plugin (`platform.plugins.<name>`); the plugin host reads it. */
export const PLUGIN_GRANT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: bool,
    sandbox: { enum: ['isolate', 'worker', 'inline'] },
    permissions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        net: strList,
        kv: bool,
        env: strList
      }
    },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        memoryMb: { type: 'integer', minimum: 8, maximum: 4096 },
        timeoutMs: { type: 'integer', minimum: 1, maximum: 3_600_000 },
        concurrency: { type: 'integer', minimum: 1, maximum: 1024 }
      }
    }
  }
} as const

export const CORE_CONFIG_KEYS = {
  // --- server ---
  'platform.server.port': { schema: port, default: 8080, description: 'TCP port to listen on; 0 picks a free port' },
  'platform.server.host': {
    schema: nonEmpty,
    default: '127.0.0.1',
    description:
      'Interface to listen on; the default serves this machine only, `0.0.0.0` (or `::`) exposes every interface'
  },
  'platform.server.body-limit-bytes': {
    schema: positiveInt,
    default: 1_048_576,
    description: 'Largest request body (and WebSocket frame) accepted; larger gets 413 (or close 1009)'
  },
  'platform.server.json-max-depth': {
    schema: positiveInt,
    default: 128,
    description: 'Deepest nesting accepted in a JSON body'
  },
  'platform.server.cors.origins': {
    schema: strList,
    default: [],
    description: 'Origins allowed by CORS (`*` for any); empty turns CORS headers off'
  },
  'platform.server.allowed-origins': {
    schema: strList,
    default: [],
    description:
      'Browser origins, besides loopback ones and same-origin pages on an IP address, that may open MCP, rooms, agent, AG-UI, A2A and interactions endpoints (`*` for any); others get 403'
  },
  'platform.server.trusted-proxies': {
    schema: strList,
    default: [],
    description:
      'Proxies (IP addresses or CIDR blocks, IPv4 or IPv6) whose `X-Forwarded-For` names the client: a request from one counts against per-address caps, and is shown, as the right-most address in that header that is not itself listed. Empty: the peer address, and the header is ignored. Behind nginx on this host: `127.0.0.1/32` and `::1/128`'
  },
  'platform.server.shutdown-timeout-ms': {
    schema: positiveInt,
    default: 4000,
    description: 'How long a graceful shutdown waits for in-flight responses'
  },

  // --- process ---
  'platform.data-dir': { schema: nonEmpty, default: './data', description: 'Directory of the LMDB environment' },
  'platform.log-level': { schema: { enum: [...LOG_LEVELS] }, default: 'info', description: 'pino log level' },

  // --- cluster: read by the core (node identity, the shared-state check) and by every Postgres store ---
  'platform.cluster.enabled': {
    schema: bool,
    default: false,
    description:
      'Cluster mode: several nodes on one PostgreSQL database and one Redis. Stores of shared state default to `postgres`, and one explicitly set to `lmdb` or `memory` stops start-up'
  },
  'platform.cluster.node-id': {
    schema: { type: 'string', pattern: NODE_ID.source },
    description:
      "This node's id, recorded as the owner of the runs it starts (a restart marks interrupted only its own). Default: generated once and kept in `<data-dir>/node-id`"
  },
  'platform.cluster.lease-ms': {
    schema: { type: 'integer', minimum: 100, maximum: 600_000 },
    default: 5000,
    description:
      'How long a node owns a run or a task (A2A or MCP) it stops renewing (Postgres-backed runs and tasks): each node renews its leases three times per lease, and another node ends a lost node’s runs and tasks FAILED `interrupted: node lost` within about 1.5 leases'
  },
  'platform.postgres.url': {
    schema: nonEmpty,
    secret: true,
    description:
      'The PostgreSQL connection string every Postgres-backed store uses unless its own key overrides it, e.g. `postgres://user:pass@127.0.0.1:5432/platform`'
  },
  'platform.postgres.pool-size': {
    schema: positiveInt,
    default: 10,
    description:
      "Connections a Postgres pool keeps open at most: the one the stores of shared state share, and the interactions' own unless its key overrides it"
  },

  // --- plugins ---
  'platform.plugins.dirs': {
    schema: strList,
    default: ['./plugins'],
    description: 'Plugin directories to load and watch'
  },
  'platform.plugin-kv.store': {
    schema: { enum: ['memory', 'lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      "Where plugins' key-value storage (`ctx.kv`) is kept: `lmdb` (this node's data directory), `postgres` (`platform.postgres.url`: a value put on one node is read on every node) or `memory` (in the process, lost on restart). In cluster mode the default is `postgres`"
  },
  'platform.sandbox.isolate.plugins-per-process': {
    schema: positiveInt,
    default: 8,
    description:
      'Isolate-tier plugins a shared sandbox process takes before another is started; 1 gives every plugin a process of its own'
  },
  'platform.sandbox.spin-us': {
    schema: { type: 'integer', minimum: 0, maximum: 10_000 },
    default: 50,
    description:
      'Microseconds a sandbox that has answered a call (a worker-tier thread, an isolate sandbox process) watches for the next one before it sleeps: waking a sleeping thread or process costs more than watching (most on virtual machines whose idle CPUs halt); a sandbox whose calls come sparsely stops watching until they come closely again; 0: it sleeps at once'
  },
  'platform.sandbox.isolate.processes': {
    schema: { type: 'integer', minimum: 0 },
    default: 4,
    description:
      'Most shared isolate sandbox processes; when all are full, new plugins join the least loaded one. 0: no cap. A plugin that crashed its process runs in one of its own, outside this count'
  },

  // --- auth ---
  'platform.auth.tokens': {
    schema: { type: 'array', items: tokenEntry },
    default: [],
    secret: true,
    description:
      'API tokens: a list of `{token | sha256, principal, roles}`; sent as `Authorization: Bearer <t>` or `X-Platform-Auth: <t>`'
  },
  'platform.auth.first-run-token': {
    schema: bool,
    default: true,
    description:
      'With no token configured and a loopback bind, the first `platform serve` makes an admin token, keeps its SHA-256 in the data directory and prints a dashboard URL carrying it once; never on another bind'
  },

  // --- WebSocket and SSE (read by the HTTP server and by areas that do not depend on transport) ---
  'platform.transport.heartbeat-seconds': {
    schema: positiveInt,
    default: 25,
    description: 'Heartbeat interval of SSE comments and WebSocket pings'
  },
  'platform.transport.max-backpressure-bytes': {
    schema: positiveInt,
    default: 1_048_576,
    description: 'A WebSocket consumer buffering more than this is closed (1008 slow consumer)'
  },

  // --- admin control plane: the master switch (governance reads it too) and what the write and read gates read ---
  'platform.admin.enabled': { schema: bool, default: true, description: 'Master switch of the admin control plane' },
  'platform.admin.http-write-enabled': {
    schema: bool,
    default: false,
    description: 'Gate for mutating admin REST endpoints'
  },
  'platform.admin.require-principal': {
    schema: bool,
    default: true,
    description:
      'Default authorizer: REQUIRE_PRINCIPAL when true, DENY_ALL when false (unless `platform.admin.authorizer` is set)'
  },
  'platform.admin.authorizer': {
    schema: { enum: ['deny-all', 'require-principal', 'allow-all', 'roles'] },
    description: 'ControlAuthorizer for admin writes; unset follows `platform.admin.require-principal`'
  },
  'platform.admin.authorizer-roles': {
    schema: { type: 'object', additionalProperties: strList },
    default: {},
    description: 'For the `roles` authorizer: action (or `*`) to the roles allowed to perform it'
  },
  'platform.admin.required-role': {
    schema: nonEmpty,
    default: 'admin',
    description:
      'Role every admin write (REST and MCP write tools) requires, 403 otherwise; `*` lets any authenticated principal write'
  },
  'platform.admin.http-read-auth-required': {
    schema: bool,
    default: false,
    description: 'Require a principal on every admin read'
  },
  'platform.admin.content-read-auth-required': {
    schema: bool,
    default: true,
    description:
      'Require a principal on content reads (governance decisions, audit, journal and its sub-routes, workflow runs, agent conversations and facts)'
  },
  'platform.admin.workspace-read-auth-required': {
    schema: bool,
    default: true,
    description: 'Require a principal on agent workspace reads (`/api/admin/agents/{name}/workspace`)'
  },
  'platform.admin.audit-capacity': {
    schema: positiveInt,
    default: 1000,
    description: 'Control audit entries kept in memory'
  },
  'platform.admin.audit-retention': {
    schema: positiveInt,
    default: 100_000,
    description: 'Control audit entries kept in LMDB, or in PostgreSQL for all nodes together (oldest trimmed)'
  },
  'platform.admin.audit-store': {
    schema: { enum: ['memory', 'lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      "Where the control audit log is kept: `lmdb` (this node's data directory), `postgres` (`platform.postgres.url`: every node lists every node's entries, each with its `node`) or `memory` (the newest `platform.admin.audit-capacity`, lost on restart). In cluster mode the default is `postgres`"
  },
  'platform.admin.audit-anonymous-per-second': {
    schema: { type: 'integer', minimum: 0 },
    default: 10,
    description:
      'Denied attempts without a principal kept per second in the audit log (every one is counted); they live apart from the entries of known callers, which they never push out'
  }
} as const satisfies KeyDefs

/** The keys whose last segment is a name chosen by the operator (per-plugin grants). */
export const PATTERN_KEYS: KeyDefs = {
  'platform.plugins.<name>': {
    schema: PLUGIN_GRANT_SCHEMA,
    description:
      'What the operator grants plugin `<name>`: `enabled`, `sandbox`, `permissions` {net, kv, env}, `limits` {memoryMb, timeoutMs, concurrency}'
  }
}

/**
 * Each configuration key and the type of its value (`undefined` when it has no default and is
 * unset): the core's here, each area's added by its `config-keys.ts`.
 */
export interface ConfigKeys extends KeyValues<typeof CORE_CONFIG_KEYS> {}

export type ConfigKey = keyof ConfigKeys

/** The keys whose value is a `V` (or unset): e.g. `ConfigKeyOf<boolean>` for feature flags. */
export type ConfigKeyOf<V> = { [K in ConfigKey]: ConfigKeys[K] extends V | undefined ? K : never }[ConfigKey]

/** What the operator grants one plugin (`platform.plugins.<name>`), when set. */
export type PluginGrantConfig = SchemaValue<typeof PLUGIN_GRANT_SCHEMA>

/** The keys whose last segment names a plugin. */
export type PluginGrantKey = `platform.plugins.${string}`
