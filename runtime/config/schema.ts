/**
 * Every configuration key of the platform, with its JSON Schema, default and meaning: the one
 * object of defaults (pino-style). Keys are the spec's dotted names. `PATTERN_KEYS` holds the keys
 * whose last segment is a name chosen by the operator (per-plugin grants).
 */
export interface KeyDef {
  readonly schema: Record<string, unknown>
  readonly default?: unknown
  readonly description: string
}

const bool = { type: 'boolean' }
const str = { type: 'string' }
const nonEmpty = { type: 'string', minLength: 1 }
const port = { type: 'integer', minimum: 0, maximum: 65535 }
const positiveInt = { type: 'integer', minimum: 1 }
const nonNegative = { type: 'number', minimum: 0 }
const strList = { type: 'array', items: nonEmpty }

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
}

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
}

export const KEYS: Record<string, KeyDef> = {
  // --- server ---
  'platform.server.port': { schema: port, default: 8080, description: 'TCP port to listen on; 0 picks a free port' },
  'platform.server.host': { schema: nonEmpty, default: '0.0.0.0', description: 'Interface to listen on' },
  'platform.server.body-limit-bytes': { schema: positiveInt, default: 1_048_576, description: 'Largest request body (and WebSocket frame) accepted; larger gets 413 (or close 1009)' },
  'platform.server.json-max-depth': { schema: positiveInt, default: 128, description: 'Deepest nesting accepted in a JSON body' },
  'platform.server.cors.origins': { schema: strList, default: [], description: "Origins allowed by CORS (`*` for any); empty turns CORS headers off" },
  'platform.server.shutdown-timeout-ms': { schema: positiveInt, default: 4000, description: 'How long a graceful shutdown waits for in-flight responses' },
  'platform.data-dir': { schema: nonEmpty, default: './data', description: 'Directory of the LMDB environment' },
  'platform.log-level': { schema: { enum: [...LOG_LEVELS] }, default: 'info', description: 'pino log level' },

  // --- plugins ---
  'platform.plugins.dirs': { schema: strList, default: ['./plugins'], description: 'Plugin directories to load and watch' },

  // --- auth ---
  'platform.auth.tokens': { schema: { type: 'array', items: tokenEntry }, default: [], description: 'API tokens: a list of `{token | sha256, principal, roles}`; sent as `Authorization: Bearer <t>` or `X-Platform-Auth: <t>`' },

  // --- transport ---
  'platform.transport.heartbeat-seconds': { schema: positiveInt, default: 25, description: 'Heartbeat interval of SSE comments and WebSocket pings' },
  'platform.transport.max-backpressure-bytes': { schema: positiveInt, default: 1_048_576, description: 'A WebSocket consumer buffering more than this is closed (1008 slow consumer)' },
  'platform.transport.long-polling-timeout-seconds': { schema: positiveInt, default: 25, description: 'How long a long-polling GET waits for messages before answering empty' },
  'platform.transport.long-polling-queue': { schema: positiveInt, default: 1000, description: 'Messages kept for a long-polling client between polls; beyond it the client is disconnected' },
  'platform.transport.long-polling-idle-seconds': { schema: positiveInt, default: 30, description: 'A long-polling client with no poll open for this long is disconnected' },

  // --- admin (spec A, reference §2.3) ---
  'platform.admin.enabled': { schema: bool, default: true, description: 'Master switch of the admin control plane' },
  'platform.admin.mcp-tools': { schema: bool, default: true, description: 'Register read-only admin MCP tools' },
  'platform.admin.mcp-write-tools': { schema: bool, default: false, description: 'Register write admin MCP tools' },
  'platform.admin.http-write-enabled': { schema: bool, default: false, description: 'Gate for mutating admin REST endpoints' },
  'platform.admin.require-principal': { schema: bool, default: true, description: 'Default authorizer: REQUIRE_PRINCIPAL when true, DENY_ALL when false (unless `platform.admin.authorizer` is set)' },
  'platform.admin.authorizer': { schema: { enum: ['deny-all', 'require-principal', 'allow-all', 'roles'] }, description: 'ControlAuthorizer for admin writes; unset follows `platform.admin.require-principal`' },
  'platform.admin.authorizer-roles': { schema: { type: 'object', additionalProperties: strList }, default: {}, description: 'For the `roles` authorizer: action (or `*`) to the roles allowed to perform it' },
  'platform.admin.required-role': { schema: nonEmpty, description: 'Role every admin write requires (403 otherwise)' },
  'platform.admin.http-read-auth-required': { schema: bool, default: false, description: 'Require a principal on every admin read' },
  'platform.admin.content-read-auth-required': { schema: bool, default: true, description: 'Require a principal on content reads (decisions, audit, journal)' },
  'platform.admin.audit-capacity': { schema: positiveInt, default: 1000, description: 'Control audit entries kept in memory' },
  'platform.admin.audit-retention': { schema: positiveInt, default: 100_000, description: 'Control audit entries kept in LMDB' },

  // --- interactions (spec B) ---
  'platform.interactions.enabled': { schema: bool, default: true, description: 'Serve the interactions API' },
  'platform.interactions.http-write-enabled': { schema: bool, default: false, description: 'Gate for create, continue, cancel and delete' },
  'platform.interactions.demo-principal': { schema: nonEmpty, description: 'Fixed principal injected for demos only; never in production (a warning is logged)' },
  'platform.interactions.store': { schema: { enum: ['memory', 'lmdb', 'postgres'] }, default: 'memory', description: 'Interaction store' },

  // --- MCP (spec C) ---
  'platform.mcp-sandbox-origin': { schema: nonEmpty, description: 'Distinct origin that renders MCP Apps through a proxy frame' },
  'platform.mcp.enabled': { schema: bool, default: true, description: 'Serve MCP on /platform/mcp and the agent endpoints' },
  'platform.mcp.session-ttl-minutes': { schema: positiveInt, default: 30, description: 'Idle time after which a session-dialect MCP session ends' },
  'platform.mcp.max-sessions': { schema: positiveInt, default: 10_000, description: 'Most live MCP sessions; initialize beyond it gets 503' },
  'platform.mcp.allowed-origins': { schema: strList, default: [], description: 'Origins allowed to call MCP endpoints besides loopback ones (`*` for any); others get 403' },
  'platform.mcp.body-limit-bytes': { schema: positiveInt, description: 'Largest MCP request body; unset uses platform.server.body-limit-bytes' },
  'platform.mcp.cache-ttl-ms': { schema: { type: 'integer', minimum: 0 }, default: 0, description: '`ttlMs` on cacheable 2026-07-28 results (lists, resources/read, server/discover)' },
  'platform.mcp.cache-scope': { schema: { enum: ['public', 'private'] }, default: 'public', description: '`cacheScope` on cacheable 2026-07-28 results' },
  'platform.mcp.instructions': { schema: nonEmpty, description: 'Server instructions returned by initialize and server/discover' },
  'platform.mcp.request-state-key': { schema: { type: 'string', minLength: 32 }, description: 'HMAC key protecting input-required `requestState`; unset generates one and keeps it in LMDB' },
  'platform.mcp.request-state-ttl-seconds': { schema: positiveInt, default: 600, description: 'How long an input-required `requestState` stays valid' },
  'platform.mcp.tasks.ttl-ms': { schema: positiveInt, default: 300_000, description: 'How long a finished task stays readable by tasks/get' },
  'platform.mcp.tasks.poll-interval-ms': { schema: positiveInt, default: 1000, description: '`pollIntervalMs` suggested to task clients' },
  'platform.mcp.tasks.sync-window-ms': { schema: { type: 'integer', minimum: 0 }, default: 50, description: 'A long-running tool that settles within this window answers directly instead of creating a task' },

  // --- MCP extras (spec C: OAuth resource server, client tool calls, tracing) ---
  'org.platform.mcp.auth.resource': { schema: nonEmpty, description: 'OAuth 2.0 resource identifier (URL) of the MCP endpoints; setting it turns the resource server on (RFC 9728 metadata, 401 challenges)' },
  'org.platform.mcp.auth.authorizationServers': { schema: { anyOf: [nonEmpty, strList] }, default: [], description: 'Authorization server issuer URL(s) listed in the protected-resource metadata (space- or comma-separated, or a list)' },
  'org.platform.mcp.auth.scopes': { schema: str, default: '', description: 'Space-separated scopes every MCP request\'s token must carry (403 insufficient_scope otherwise); advertised in the metadata and the challenge' },
  'org.platform.auth.tokenValidator': { schema: nonEmpty, description: 'TokenValidator for MCP bearer tokens: `jwt` (built-in, the default), a validator registered in code, or `<plugin>/<tool>` (a plugin tool called with `{token}`)' },
  'org.platform.auth.jwt.issuer': { schema: nonEmpty, description: 'Required `iss` of JWT access tokens (unset: not checked)' },
  'org.platform.auth.jwt.audience': { schema: { anyOf: [nonEmpty, strList] }, description: 'Accepted `aud` of JWT access tokens; unset uses org.platform.mcp.auth.resource' },
  'org.platform.auth.jwt.keys': { schema: { type: 'array', items: { anyOf: [nonEmpty, { type: 'object' }] } }, default: [], description: 'JWT verification keys: PEM public keys or JWKs (`{kty:"oct", k}` for HMAC)' },
  'org.platform.auth.jwt.jwksFile': { schema: nonEmpty, description: 'Path of a JWKS file (`{"keys":[...]}`) with JWT verification keys' },
  'org.platform.auth.jwt.algorithms': { schema: strList, default: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'], description: 'JWT `alg` values accepted (add HS256/384/512 for shared-secret keys)' },
  'org.platform.auth.jwt.clockToleranceSeconds': { schema: { type: 'integer', minimum: 0 }, default: 30, description: 'Leeway for `exp`, `nbf` and `iat`' },
  'platform.mcp.client-tools.timeout-ms': { schema: positiveInt, default: 30_000, description: 'How long callClientTool waits for the client\'s answer' },
  'platform.mcp.client-tools.response-route': { schema: bool, default: false, description: 'Serve POST /_mcp/tool-response, where clients without a stream post their answers to server-to-client tool calls' },
  'platform.mcp.tracing.enabled': { schema: bool, default: true, description: 'Spans around tools/call, resources/read and prompts/get through @opentelemetry/api (no-op without an SDK)' },

  // --- governance (spec D) ---
  'platform.ai.governance.policy-files': { schema: strList, default: [], description: 'YAML policy files loaded at start-up' },
  'platform.ai.governance.decision-log.capacity': { schema: positiveInt, default: 500, description: 'Decision log entries kept in memory' },
  'platform.ai.governance.memory.enabled': { schema: bool, default: false, description: 'Persist deny and prefer lessons across restarts' },
  'platform.ai.governance.memory.ttl-seconds': { schema: { type: 'integer', minimum: 0 }, default: 0, description: 'Lesson expiry; 0 means none' },
  'platform.ai.governance.memory.min-confidence': { schema: { type: 'number', minimum: 0, maximum: 1 }, default: 0.0, description: 'Read-gate floor: lessons below it are dropped on read' },
  'platform.ai.governance.enabled': { schema: bool, default: true, description: 'Run the governance plane (policy chain, tool-call gate); when false the routes answer as if no controller were installed' },
  'platform.ai.governance.decision-log.retention': { schema: positiveInt, default: 100_000, description: 'Decision log entries kept in LMDB (oldest trimmed)' },
  'platform.ai.governance.kill-switch.enabled': { schema: bool, default: false, description: 'Install a kill switch from code (source `code:KillSwitchPolicy`) even when no policy file declares one' },

  // --- scope (spec D, scope confinement; the two fail-open switches are process properties, not config) ---
  'platform.ai.runtime': { schema: nonEmpty, default: 'demo', description: 'AI runtime that answers turns: `demo` (built-in, offline, deterministic), `openai` (an OpenAI-compatible `/v1/chat/completions` server, streamed), the name of a plugin runtime, or `auto` (the highest-priority available one)' },
  'platform.ai.openai.base-url': { schema: nonEmpty, description: 'For runtime `openai`: base URL including the version segment, e.g. `http://127.0.0.1:11434/v1`; unset leaves the runtime unavailable' },
  'platform.ai.openai.model': { schema: nonEmpty, description: 'For runtime `openai`: the chat model name; unset leaves the runtime unavailable' },
  'platform.ai.openai.api-key': { schema: nonEmpty, description: 'For runtime `openai`: bearer token sent to the server, if it needs one' },
  'platform.ai.openai.timeout-ms': { schema: positiveInt, default: 120000, description: 'For runtime `openai`: bound of one whole streamed request' },
  'platform.ai.openai.idle-timeout-ms': { schema: positiveInt, default: 15000, description: 'For runtime `openai`: bound of the silence before the first chunk and between two chunks; a server that hangs ends the request with a timeout error' },
  'platform.ai.openai.max-concurrency': { schema: positiveInt, default: 8, description: 'For runtime `openai`: requests in flight at once; one more ends at once with a `capacity` error event' },
  'platform.ai.scope.embedder': { schema: nonEmpty, default: 'none', description: 'Embedding runtime of the EMBEDDING_SIMILARITY and SEMANTIC_INTENT scope tiers: `none` (they degrade to RULE_BASED), `lexical` (built-in, offline, word overlap only), `openai` (an OpenAI-compatible `/v1/embeddings` server), or the name of a plugin embedder' },
  'platform.ai.scope.embeddings.base-url': { schema: nonEmpty, description: 'For embedder `openai`: base URL including the version segment, e.g. `http://127.0.0.1:11434/v1`' },
  'platform.ai.scope.embeddings.model': { schema: nonEmpty, description: 'For embedder `openai`: the embedding model name' },
  'platform.ai.scope.embeddings.api-key': { schema: nonEmpty, description: 'For embedder `openai`: bearer token sent to the server, if it needs one' },
  'platform.ai.scope.embeddings.timeout-ms': { schema: positiveInt, default: 5000, description: 'Bound of one embedding call (and of a plugin embedder call)' },
  'platform.ai.scope.classifier': { schema: nonEmpty, default: 'none', description: 'Decision model of the LLM_CLASSIFIER scope tier: `none` (the AI runtime\'s decision model when one is installed, otherwise every request on that tier is denied), `openai` (an OpenAI-compatible `/v1/chat/completions` server), or the name of a plugin classifier' },
  'platform.ai.scope.chat.base-url': { schema: nonEmpty, description: 'For classifier `openai`: base URL including the version segment' },
  'platform.ai.scope.chat.model': { schema: nonEmpty, description: 'For classifier `openai`: the chat model name' },
  'platform.ai.scope.chat.api-key': { schema: nonEmpty, description: 'For classifier `openai`: bearer token sent to the server, if it needs one' },
  'platform.ai.scope.chat.timeout-ms': { schema: positiveInt, default: 5000, description: 'Bound of one LLM-tier scope question (waiting for a slot included)' },
  'platform.ai.scope.chat.max-concurrency': { schema: positiveInt, default: 8, description: 'LLM-tier scope questions in flight at once; a question that gets no slot before its deadline is uncertain (denied)' }
}

export const PATTERN_KEYS: Record<string, KeyDef> = {
  'platform.plugins.<name>': { schema: PLUGIN_GRANT_SCHEMA, description: 'What the operator grants plugin `<name>`: `enabled`, `sandbox`, `permissions` {net, kv, env}, `limits` {memoryMb, timeoutMs, concurrency}' }
}

/** The one ajv schema over the flat (dotted) configuration object. */
export function configSchema (): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  for (const [k, d] of Object.entries(KEYS)) properties[k] = d.schema
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    patternProperties: { '^platform\\.plugins\\.(?!dirs$)[A-Za-z0-9_-]+$': PLUGIN_GRANT_SCHEMA }
  }
}

export function defaults (): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, d] of Object.entries(KEYS)) if (d.default !== undefined) out[k] = structuredClone(d.default)
  return out
}
