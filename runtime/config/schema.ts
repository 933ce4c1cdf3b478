/**
 * Every configuration key of the platform, with its JSON Schema, default and meaning: the one
 * object of defaults (pino-style). Keys are dotted names. `PATTERN_KEYS` holds the keys
 * whose last segment is a name chosen by the operator (per-plugin grants). `ConfigKeys`, the type
 * of each key's value, is derived from the same schemas, so `Config.get` needs no casts.
 */
export interface KeyDef {
  readonly schema: Readonly<Record<string, unknown>>
  readonly default?: unknown
  readonly description: string
  /**
   * The area that will read this key, which is not built yet: the key is accepted (it belongs
   * to that area) but switches nothing today, and the README says so.
   */
  readonly reservedFor?: string
}

const bool = { type: 'boolean' } as const
const str = { type: 'string' } as const
const nonEmpty = { type: 'string', minLength: 1 } as const
const port = { type: 'integer', minimum: 0, maximum: 65535 } as const
const positiveInt = { type: 'integer', minimum: 1 } as const
const strList = { type: 'array', items: nonEmpty } as const

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

export const KEY_DEFS = {
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
  'platform.server.shutdown-timeout-ms': {
    schema: positiveInt,
    default: 4000,
    description: 'How long a graceful shutdown waits for in-flight responses'
  },
  'platform.data-dir': { schema: nonEmpty, default: './data', description: 'Directory of the LMDB environment' },
  'platform.log-level': { schema: { enum: [...LOG_LEVELS] }, default: 'info', description: 'pino log level' },

  // --- plugins ---
  'platform.plugins.dirs': {
    schema: strList,
    default: ['./plugins'],
    description: 'Plugin directories to load and watch'
  },
  'platform.sandbox.isolate.plugins-per-process': {
    schema: positiveInt,
    default: 8,
    description:
      'Isolate-tier plugins a shared sandbox process takes before another is started; 1 gives every plugin a process of its own'
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
    description:
      'API tokens: a list of `{token | sha256, principal, roles}`; sent as `Authorization: Bearer <t>` or `X-Platform-Auth: <t>`'
  },

  // --- transport ---
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
  'platform.transport.long-polling-timeout-seconds': {
    schema: positiveInt,
    default: 25,
    description: 'How long a long-polling GET waits for messages before answering empty'
  },
  'platform.transport.long-polling-queue': {
    schema: positiveInt,
    default: 1000,
    description: 'Messages kept for a long-polling client between polls; beyond it the client is disconnected'
  },
  'platform.transport.long-polling-idle-seconds': {
    schema: positiveInt,
    default: 30,
    description: 'A long-polling client with no poll open for this long is disconnected'
  },
  'platform.transport.rooms.auth': {
    schema: { enum: ['open', 'required'] },
    default: 'open',
    description:
      '`open`: anyone may join a room (the demo); `required`: joining needs a principal (an API token or JWT), else 401'
  },
  'platform.transport.rooms.max-message-bytes': {
    schema: positiveInt,
    default: 65_536,
    description:
      'Largest room message (WebSocket frame or POST body; capped by platform.server.body-limit-bytes): beyond it close 1009 or 413'
  },
  'platform.transport.rooms.max-messages-per-second': {
    schema: { type: 'integer', minimum: 0 },
    default: 20,
    description:
      'Messages a room member may send per second, sustained (0: no limit); beyond it close 1008 on WebSocket, 429 on POST'
  },
  'platform.transport.rooms.message-burst': {
    schema: positiveInt,
    default: 40,
    description: 'Messages a room member may send at once before the per-second rate applies'
  },

  // --- admin ---
  'platform.admin.enabled': { schema: bool, default: true, description: 'Master switch of the admin control plane' },
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
      'Admin events are sent to subscribers at most this often, one frame per subscriber per batch (0: once per event-loop turn)'
  },
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
  'platform.admin.workflows.store': {
    schema: { enum: ['memory', 'lmdb'] },
    default: 'lmdb',
    description: 'WorkflowStore: `lmdb` keeps workflow manifests across restarts, `memory` for the life of the process'
  },
  'platform.admin.evals.store': {
    schema: { enum: ['memory', 'lmdb'] },
    default: 'lmdb',
    description: 'EvalRunStore: `lmdb` keeps eval runs across restarts, `memory` for the life of the process'
  },
  'platform.admin.evals.max-runs-per-baseline': {
    schema: positiveInt,
    default: 500,
    description: 'Eval runs kept per baseline; the oldest by timestamp is evicted beyond it'
  },
  'platform.admin.audit-capacity': {
    schema: positiveInt,
    default: 1000,
    description: 'Control audit entries kept in memory'
  },
  'platform.admin.audit-retention': {
    schema: positiveInt,
    default: 100_000,
    description: 'Control audit entries kept in LMDB'
  },

  // --- fleet ---
  'platform.fleet.journal.store': {
    schema: { enum: ['memory', 'lmdb'] },
    default: 'lmdb',
    description:
      'Coordination journal: `lmdb` keeps events across restarts and crashes, `memory` for the life of the process'
  },
  'platform.fleet.journal.max-events': {
    schema: positiveInt,
    default: 100_000,
    description: 'Coordination journal events kept; beyond it the oldest go first'
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

  // --- interactions ---
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
    description:
      'Where interactions and their steps are kept: `lmdb` (named databases of the data directory; an acknowledged step survives a crash), `postgres` (needs `platform.interactions.postgres.url`) or `memory` (in the process, lost on restart)'
  },
  'platform.interactions.postgres.url': {
    schema: nonEmpty,
    description:
      'For store `postgres`: connection string, e.g. `postgres://user:pass@127.0.0.1:5432/platform` (a `host=/dir` query names a unix socket directory)'
  },
  'platform.interactions.postgres.pool-size': {
    schema: { type: 'integer', minimum: 1, maximum: 1000 },
    default: 10,
    description: 'For store `postgres`: connections kept open at most; more queries at once wait for one'
  },

  // --- MCP ---
  'platform.mcp-sandbox-origin': {
    schema: nonEmpty,
    description: 'Distinct origin that renders MCP Apps through a proxy frame',
    reservedFor: 'admin'
  },
  'platform.mcp.enabled': {
    schema: bool,
    default: true,
    description: 'Serve MCP on /platform/mcp and the agent endpoints'
  },
  'platform.mcp.session-ttl-minutes': {
    schema: positiveInt,
    default: 30,
    description: 'Idle time after which a session-dialect MCP session ends'
  },
  'platform.mcp.max-sessions': {
    schema: positiveInt,
    default: 10_000,
    description:
      'Most live MCP sessions; at the cap the least recently seen idle anonymous session is ended to make room, else initialize gets 503'
  },
  'platform.mcp.sessions.max-per-principal': {
    schema: positiveInt,
    default: 100,
    description: 'Most live MCP sessions of one authenticated principal; initialize beyond it gets 429'
  },
  'platform.mcp.sessions.max-per-address': {
    schema: positiveInt,
    default: 32,
    description: 'Most live anonymous MCP sessions from one client address; initialize beyond it gets 429'
  },
  'platform.mcp.allowed-origins': {
    schema: strList,
    default: [],
    description: 'Origins allowed to call MCP endpoints besides loopback ones (`*` for any); others get 403'
  },
  'platform.mcp.body-limit-bytes': {
    schema: positiveInt,
    description: 'Largest MCP request body; unset uses platform.server.body-limit-bytes'
  },
  'platform.mcp.cache-ttl-ms': {
    schema: { type: 'integer', minimum: 0 },
    default: 0,
    description: '`ttlMs` on cacheable 2026-07-28 results (lists, resources/read, server/discover)'
  },
  'platform.mcp.cache-scope': {
    schema: { enum: ['public', 'private'] },
    default: 'public',
    description: '`cacheScope` on cacheable 2026-07-28 results'
  },
  'platform.mcp.instructions': {
    schema: nonEmpty,
    description: 'Server instructions returned by initialize and server/discover'
  },
  'platform.mcp.request-state-key': {
    schema: { type: 'string', minLength: 32 },
    description: 'HMAC key protecting input-required `requestState`; unset generates one and keeps it in LMDB'
  },
  'platform.mcp.request-state-ttl-seconds': {
    schema: positiveInt,
    default: 600,
    description: 'How long an input-required `requestState` stays valid'
  },
  'platform.mcp.tasks.ttl-ms': {
    schema: positiveInt,
    default: 300_000,
    description: 'How long a finished task stays readable by tasks/get'
  },
  'platform.mcp.tasks.poll-interval-ms': {
    schema: positiveInt,
    default: 1000,
    description: '`pollIntervalMs` suggested to task clients'
  },
  'platform.mcp.tasks.sync-window-ms': {
    schema: { type: 'integer', minimum: 0 },
    default: 50,
    description: 'A long-running tool that settles within this window answers directly instead of creating a task'
  },

  // --- MCP extras (OAuth resource server, client tool calls, tracing) ---
  'org.platform.mcp.auth.resource': {
    schema: nonEmpty,
    description:
      'OAuth 2.0 resource identifier (URL) of the MCP endpoints; setting it turns the resource server on (RFC 9728 metadata, 401 challenges)'
  },
  'org.platform.mcp.auth.authorizationServers': {
    schema: { anyOf: [nonEmpty, strList] },
    default: [],
    description:
      'Authorization server issuer URL(s) listed in the protected-resource metadata (space- or comma-separated, or a list)'
  },
  'org.platform.mcp.auth.scopes': {
    schema: str,
    default: '',
    description:
      "Space-separated scopes every MCP request's token must carry (403 insufficient_scope otherwise); advertised in the metadata and the challenge"
  },
  'org.platform.auth.tokenValidator': {
    schema: nonEmpty,
    description:
      'TokenValidator for MCP bearer tokens: `jwt` (built-in, the default), a validator registered in code, or `<plugin>/<tool>` (a plugin tool called with `{token}`)'
  },
  'org.platform.auth.jwt.issuer': {
    schema: nonEmpty,
    description: 'Required `iss` of JWT access tokens (unset: not checked)'
  },
  'org.platform.auth.jwt.audience': {
    schema: { anyOf: [nonEmpty, strList] },
    description: 'Accepted `aud` of JWT access tokens; unset uses org.platform.mcp.auth.resource'
  },
  'org.platform.auth.jwt.keys': {
    schema: { type: 'array', items: { anyOf: [nonEmpty, { type: 'object' }] } },
    default: [],
    description: 'JWT verification keys: PEM public keys or JWKs (`{kty:"oct", k}` for HMAC)'
  },
  'org.platform.auth.jwt.jwksFile': {
    schema: nonEmpty,
    description: 'Path of a JWKS file (`{"keys":[...]}`) with JWT verification keys'
  },
  'org.platform.auth.jwt.algorithms': {
    schema: strList,
    default: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
    description: 'JWT `alg` values accepted (add HS256/384/512 for shared-secret keys)'
  },
  'org.platform.auth.jwt.clockToleranceSeconds': {
    schema: { type: 'integer', minimum: 0 },
    default: 30,
    description: 'Leeway for `exp`, `nbf` and `iat`'
  },
  'platform.mcp.client-tools.timeout-ms': {
    schema: positiveInt,
    default: 30_000,
    description: "How long callClientTool waits for the client's answer"
  },
  'platform.mcp.client-tools.response-route': {
    schema: bool,
    default: false,
    description:
      'Serve POST /_mcp/tool-response, where clients without a stream post their answers to server-to-client tool calls'
  },
  'platform.mcp.tracing.enabled': {
    schema: bool,
    default: true,
    description:
      'Spans around tools/call, resources/read and prompts/get through @opentelemetry/api (no-op without an SDK)'
  },

  // --- governance ---
  'platform.ai.governance.policy-files': {
    schema: strList,
    default: [],
    description: 'YAML policy files loaded at start-up'
  },
  'platform.ai.governance.watch-interval-ms': {
    schema: { type: 'integer', minimum: 0 },
    default: 1000,
    description:
      "How often the policy files are checked for edits (an edit that loads replaces that file's policies, one that does not is logged and shown in health); 0 turns watching off"
  },
  'platform.ai.governance.decision-log.capacity': {
    schema: positiveInt,
    default: 500,
    description: 'Decision log entries kept in memory'
  },
  'platform.ai.governance.memory.enabled': {
    schema: bool,
    default: false,
    description: 'Persist deny and prefer lessons across restarts'
  },
  'platform.ai.governance.memory.ttl-seconds': {
    schema: { type: 'integer', minimum: 0 },
    default: 0,
    description: 'Lesson expiry; 0 means none'
  },
  'platform.ai.governance.memory.min-confidence': {
    schema: { type: 'number', minimum: 0, maximum: 1 },
    default: 0.0,
    description: 'Read-gate floor: lessons below it are dropped on read'
  },
  'platform.ai.governance.feedback.max-items': {
    schema: { type: 'integer', minimum: 0, maximum: 100 },
    default: 5,
    description:
      "Distinct deny and prefer guidance lines (each at most 512 characters) re-injected into a turn's system prompt for its conversation, else session, else user; 0 turns the learning-signal loop off"
  },
  'platform.ai.governance.enabled': {
    schema: bool,
    default: true,
    description:
      'Run the governance plane (policy chain, tool-call gate); when false the routes answer as if no controller were installed'
  },
  'platform.ai.governance.decision-log.retention': {
    schema: positiveInt,
    default: 100_000,
    description: 'Decision log entries kept in LMDB (oldest trimmed)'
  },
  'platform.ai.governance.commitment-records.enabled': {
    schema: bool,
    default: false,
    description:
      'Keep signed commitment records of agent dispatches (Ed25519 over the JCS form of the record without proof) and list them at GET /api/admin/governance/commitments'
  },
  'platform.ai.governance.commitment-records.key-file': {
    schema: str,
    default: '',
    description:
      'PKCS#8 PEM Ed25519 private key that signs commitment records; empty: <data-dir>/commitment-signing-key.pem, generated with mode 0600 on first start. A configured file must exist, and a key that does not load stops start-up'
  },
  'platform.ai.governance.commitment-records.verify-key-files': {
    schema: strList,
    default: [],
    description:
      'PEM files of earlier commitment signing keys (public SPKI or the PKCS#8 key itself): published beside the current key, so records they signed keep verifying after a key change'
  },
  'platform.ai.governance.commitment-records.retention': {
    schema: positiveInt,
    default: 100_000,
    description: 'Commitment records kept in LMDB (oldest trimmed)'
  },
  'platform.ai.governance.kill-switch.enabled': {
    schema: bool,
    default: false,
    description:
      'Install a kill switch from code (source `code:KillSwitchPolicy`) even when no policy file declares one'
  },

  // --- AI runtimes ---
  'platform.ai.runtime': {
    schema: nonEmpty,
    default: 'demo',
    description:
      'AI runtime that answers turns: `demo` (built-in, offline, deterministic), `openai` (an OpenAI-compatible `/v1/chat/completions` server, streamed), the name of a plugin runtime, or `auto` (the highest-priority available one)'
  },
  'platform.ai.openai.base-url': {
    schema: nonEmpty,
    description:
      'For runtime `openai`: base URL including the version segment, e.g. `http://127.0.0.1:11434/v1`; unset leaves the runtime unavailable'
  },
  'platform.ai.openai.model': {
    schema: nonEmpty,
    description: 'For runtime `openai`: the chat model name; unset leaves the runtime unavailable'
  },
  'platform.ai.openai.api-key': {
    schema: nonEmpty,
    description: 'For runtime `openai`: bearer token sent to the server, if it needs one'
  },
  'platform.ai.openai.timeout-ms': {
    schema: positiveInt,
    default: 120000,
    description: 'For runtime `openai`: bound of one whole streamed request'
  },
  'platform.ai.openai.idle-timeout-ms': {
    schema: positiveInt,
    default: 15000,
    description:
      'For runtime `openai`: bound of the silence before the first chunk and between two chunks; a server that hangs ends the request with a timeout error'
  },
  'platform.ai.openai.max-concurrency': {
    schema: positiveInt,
    default: 8,
    description: 'For runtime `openai`: requests in flight at once; one more ends at once with a `capacity` error event'
  },
  'platform.ai.max-tool-rounds': {
    schema: positiveInt,
    default: 8,
    description:
      'Rounds of tool calls one agent turn may make (model asks, tools run, results go back); one more ends the turn with an error'
  },
  'platform.ai.agent-tools': {
    schema: { type: 'object', propertyNames: nonEmpty, additionalProperties: strList },
    default: {},
    description:
      "Extra tools for agents: agent name to a list of tool names served on `/platform/mcp`, offered to the model beside the agent's own (its own win a name clash); a name that matches no tool at turn time is left out with a warning"
  },
  'platform.ai.endpoint.auth': {
    schema: { enum: ['open', 'required'] },
    default: 'open',
    description:
      '`open`: anyone may talk to agents over their endpoints (chat and AG-UI; the server binds loopback by default); `required`: a principal (an API token or JWT) is needed, else 401'
  },
  'platform.ai.endpoint.max-message-bytes': {
    schema: positiveInt,
    default: 65_536,
    description:
      'Largest prompt a client may send to an agent (WebSocket frame or POST body; capped by platform.server.body-limit-bytes): beyond it close 1009 or 413'
  },
  'platform.ai.endpoint.max-messages-per-second': {
    schema: { type: 'integer', minimum: 0 },
    default: 20,
    description:
      'Frames (prompts, cancels) one agent-endpoint connection may send per second, sustained (0: no limit); beyond it close 1008 on WebSocket, 429 on POST'
  },
  'platform.ai.endpoint.message-burst': {
    schema: positiveInt,
    default: 40,
    description: 'Frames one agent-endpoint connection may send at once before the per-second rate applies'
  },
  'platform.ai.memory.store': {
    schema: { enum: ['memory', 'lmdb'] },
    default: 'lmdb',
    description:
      'Where conversation memory is kept: `lmdb` (a named database of the data directory, survives restarts) or `memory` (in the process, lost on restart)'
  },
  'platform.ai.memory.max-messages': {
    schema: positiveInt,
    default: 50,
    description:
      'Messages kept per conversation; the oldest are dropped first, with any tool result whose call was dropped'
  },
  // --- A2A ---
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
      'A2A tasks kept at once; a message that would create one more is refused until terminal tasks are evicted'
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
  'platform.a2a.remote-agents': {
    schema: {
      type: 'object',
      propertyNames: nonEmpty,
      additionalProperties: { type: 'string', pattern: '^https?://' }
    },
    default: {},
    description:
      "Agents other servers host, by name: the URL of each one's A2A JSON-RPC endpoint, which fleet calls reach over A2A; `AGENT_<NAME>_URL` in the environment wins"
  },
  'platform.a2a.root-agent': {
    schema: nonEmpty,
    description:
      'Agent whose card `/.well-known/agent-card.json` at the host root serves; unset: the only agent when exactly one is loaded, else 404'
  },

  // --- scope (scope confinement; the two fail-open switches are process properties, not config) ---
  'platform.ai.scope.embedder': {
    schema: nonEmpty,
    default: 'none',
    description:
      'Embedding runtime of the EMBEDDING_SIMILARITY and SEMANTIC_INTENT scope tiers: `none` (they degrade to RULE_BASED), `lexical` (built-in, offline, word overlap only), `openai` (an OpenAI-compatible `/v1/embeddings` server), or the name of a plugin embedder'
  },
  'platform.ai.scope.embeddings.base-url': {
    schema: nonEmpty,
    description: 'For embedder `openai`: base URL including the version segment, e.g. `http://127.0.0.1:11434/v1`'
  },
  'platform.ai.scope.embeddings.model': {
    schema: nonEmpty,
    description: 'For embedder `openai`: the embedding model name'
  },
  'platform.ai.scope.embeddings.api-key': {
    schema: nonEmpty,
    description: 'For embedder `openai`: bearer token sent to the server, if it needs one'
  },
  'platform.ai.scope.embeddings.timeout-ms': {
    schema: positiveInt,
    default: 5000,
    description: 'Bound of one embedding call (and of a plugin embedder call)'
  },
  'platform.ai.scope.classifier': {
    schema: nonEmpty,
    default: 'none',
    description:
      "Decision model of the LLM_CLASSIFIER scope tier: `none` (the AI runtime's decision model when one is installed, otherwise every request on that tier is denied), `openai` (an OpenAI-compatible `/v1/chat/completions` server), or the name of a plugin classifier"
  },
  'platform.ai.scope.chat.base-url': {
    schema: nonEmpty,
    description: 'For classifier `openai`: base URL including the version segment'
  },
  'platform.ai.scope.chat.model': { schema: nonEmpty, description: 'For classifier `openai`: the chat model name' },
  'platform.ai.scope.chat.api-key': {
    schema: nonEmpty,
    description: 'For classifier `openai`: bearer token sent to the server, if it needs one'
  },
  'platform.ai.scope.chat.timeout-ms': {
    schema: positiveInt,
    default: 5000,
    description: 'Bound of one LLM-tier scope question (waiting for a slot included)'
  },
  'platform.ai.scope.chat.max-concurrency': {
    schema: positiveInt,
    default: 8,
    description:
      'LLM-tier scope questions in flight at once; a question that gets no slot before its deadline is uncertain (denied)'
  }
} as const satisfies Record<string, KeyDef>

/** Every key by name, for code that walks them (validation, env names, docs). */
export const KEYS: Readonly<Record<string, KeyDef>> = KEY_DEFS

export const PATTERN_KEYS: Readonly<Record<string, KeyDef>> = {
  'platform.plugins.<name>': {
    schema: PLUGIN_GRANT_SCHEMA,
    description:
      'What the operator grants plugin `<name>`: `enabled`, `sandbox`, `permissions` {net, kv, env}, `limits` {memoryMb, timeoutMs, concurrency}'
  }
}

/** The one ajv schema over the flat (dotted) configuration object. */
export function configSchema(): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  for (const [k, d] of Object.entries(KEYS)) properties[k] = d.schema
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    patternProperties: { '^platform\\.plugins\\.(?!dirs$)[A-Za-z0-9_-]+$': PLUGIN_GRANT_SCHEMA }
  }
}

export function defaults(): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, d] of Object.entries(KEYS)) if (d.default !== undefined) out[k] = structuredClone(d.default)
  return out
}

/** The value a JSON Schema (declared `as const`) admits, as far as the config schemas use JSON Schema. */
export type SchemaValue<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly anyOf: readonly (infer A)[] }
    ? SchemaValue<A>
    : S extends { readonly type: 'boolean' }
      ? boolean
      : S extends { readonly type: 'integer' | 'number' }
        ? number
        : S extends { readonly type: 'string' }
          ? string
          : S extends { readonly type: 'array'; readonly items: infer I }
            ? readonly SchemaValue<I>[]
            : S extends { readonly type: 'object'; readonly properties: infer P }
              ? ObjectValue<P, S extends { readonly required: readonly (infer R)[] } ? R : never>
              : S extends { readonly type: 'object'; readonly additionalProperties: infer A extends object }
                ? Readonly<Record<string, SchemaValue<A>>>
                : S extends { readonly type: 'object' }
                  ? Readonly<Record<string, unknown>>
                  : unknown

type ObjectValue<P, R> = Readonly<
  { [K in keyof P as K extends R ? K : never]: SchemaValue<P[K]> } & {
    [K in keyof P as K extends R ? never : K]?: SchemaValue<P[K]>
  }
>

type KeyValue<D> = D extends { readonly schema: infer S }
  ? D extends { readonly default: unknown }
    ? SchemaValue<S>
    : SchemaValue<S> | undefined
  : never

/** Each configuration key and the type of its value (`undefined` when it has no default and is unset). */
export type ConfigKeys = { [K in keyof typeof KEY_DEFS]: KeyValue<(typeof KEY_DEFS)[K]> }

export type ConfigKey = keyof ConfigKeys

/** The keys whose value is a `V` (or unset): e.g. `ConfigKeyOf<boolean>` for feature flags. */
export type ConfigKeyOf<V> = { [K in ConfigKey]: ConfigKeys[K] extends V | undefined ? K : never }[ConfigKey]

/** What the operator grants one plugin (`platform.plugins.<name>`), when set. */
export type PluginGrantConfig = SchemaValue<typeof PLUGIN_GRANT_SCHEMA>

/** The keys whose last segment names a plugin. */
export type PluginGrantKey = `platform.plugins.${string}`
