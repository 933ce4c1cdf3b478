/**
 * The configuration keys the MCP area (sessions, caching, tasks, the OAuth resource server, client
 * tool calls, tracing) owns; `runtime/areas.ts` gathers them with the others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

const { bool, str, nonEmpty, positiveInt, strList } = KEY_SCHEMA

export const MCP_CONFIG_KEYS = {
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
  'platform.mcp.sessions.store': {
    schema: { enum: ['lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      'Where session-dialect MCP sessions and their subscriptions are kept: `lmdb` (the data directory; a session survives a restart of its node) or `postgres` (`platform.postgres.url`; a session opened on one node continues on any other, and its GET stream hears notifications raised on any node). In cluster mode the default is `postgres`'
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
  'platform.mcp.sessions.authenticated-reserve': {
    schema: { type: 'integer', minimum: 0 },
    description:
      'MCP sessions of platform.mcp.max-sessions kept for authenticated principals (unset: a tenth of it): anonymous callers hold at most max-sessions minus this many, beyond it their initialize gets 503; at or above max-sessions only authenticated callers get sessions'
  },
  'platform.mcp.sessions.max-capabilities-bytes': {
    schema: positiveInt,
    default: 8192,
    description: 'Largest `capabilities` (as JSON) an MCP initialize may send; larger gets -32602 and no session'
  },
  'platform.mcp.sessions.max-client-info-bytes': {
    schema: positiveInt,
    default: 4096,
    description: 'Largest `clientInfo` (as JSON) an MCP initialize may send; larger gets -32602 and no session'
  },
  'platform.mcp.sessions.max-subscriptions': {
    schema: positiveInt,
    default: 32,
    description: 'Most resources one MCP session may subscribe to at once; resources/subscribe beyond it gets -32000'
  },
  'platform.mcp.sessions.max-uri-bytes': {
    schema: { type: 'integer', minimum: 1, maximum: 1800 },
    default: 1024,
    description:
      'Longest resource URI (UTF-8 bytes) resources/subscribe accepts; longer gets -32602 (at most 1800: each subscription is an LMDB key)'
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
    secret: true,
    description: 'HMAC key protecting input-required `requestState`; unset generates one and keeps it in LMDB'
  },
  'platform.mcp.request-state-ttl-seconds': {
    schema: positiveInt,
    default: 600,
    description: 'How long an input-required `requestState` stays valid'
  },
  'platform.mcp.tasks.store': {
    schema: { enum: ['lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      'Where handed-out MCP tasks are kept: `lmdb` (the data directory; a result survives a restart, a task running when the node stopped reads failed) or `postgres` (`platform.postgres.url`; a task handed out on one node is read, listed, awaited and cancelled on any other). In cluster mode the default is `postgres`'
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
    secret: true,
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
  'platform.mcp.servers': {
    schema: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          url: { type: 'string', pattern: '^https?://' },
          command: { type: 'string', minLength: 1 },
          args: { type: 'array', items: { type: 'string' } },
          env: { type: 'object', additionalProperties: { type: 'string' } },
          tools: { type: 'array', items: { type: 'string', minLength: 1 } },
          'timeout-ms': { type: 'integer', minimum: 1 },
          expose: { type: 'boolean' },
          // a credential in the file ends up in backups and diffs: the environment holds it
          token: {
            not: {},
            description:
              "must not be set: a server's bearer token is read only from the environment variable MCP_SERVER_<NAME>_TOKEN (the server name upper-cased, - as _)"
          }
        }
      }
    },
    default: {},
    secret: true,
    description:
      'Other MCP servers whose tools agents may use, by name (lower-case letters, digits, -): `url` (Streamable HTTP, falling back to SSE) or `command` / `args` / `env` (a stdio child), `tools` (allow-list, default all), `timeout-ms` (per call, default 30000), `expose` (also serve them on /platform/mcp); the bearer token comes only from MCP_SERVER_<NAME>_TOKEN. Their tools are named `<name>.<tool>`'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof MCP_CONFIG_KEYS> {}
}
