/**
 * The single catalogue of REST errors. Every error body on the wire is
 * `{"error": message, "code": "PLT_ERR_<NAME>", "hint"?: ...}`; codes are stable and never reused.
 * `test/http/errors.test.ts` checks that each code is documented in README.md.
 */
export interface ErrorDef {
  readonly status: number
  readonly message: string | ((p: Record<string, unknown>) => string)
  readonly hint?: string
}

export const ERRORS = {
  // --- HTTP core ---
  NOT_FOUND: { status: 404, message: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: (p) => `Method ${p.method} not allowed on ${p.path}` },
  BODY_TOO_LARGE: {
    status: 413,
    message: (p) => `Request body too large (limit ${p.limit} bytes)`,
    hint: 'Raise platform.server.body-limit-bytes or send a smaller body'
  },
  MALFORMED_JSON: { status: 400, message: (p) => `Malformed JSON body: ${p.detail}` },
  JSON_TOO_DEEP: { status: 400, message: (p) => `JSON body nested deeper than ${p.limit} levels` },
  EMPTY_BODY: { status: 400, message: 'Request body is empty; a JSON body is required' },
  INVALID_BODY: { status: 400, message: (p) => `Invalid request body: ${p.detail}` },
  INVALID_QUERY: { status: 400, message: (p) => `Invalid query parameter '${p.name}': ${p.detail}` },
  CORS_ORIGIN_DENIED: {
    status: 403,
    message: (p) => `Origin '${p.origin}' is not allowed`,
    hint: 'Add it to platform.server.cors.origins'
  },
  INTERNAL: { status: 500, message: 'Internal server error' },
  SHUTTING_DOWN: { status: 503, message: 'Server is shutting down' },
  NOT_READY: { status: 503, message: 'Not ready' },

  // --- write gate ---
  ADMIN_WRITE_DISABLED: {
    status: 403,
    message: 'Admin write operations disabled',
    hint: 'Set platform.admin.http-write-enabled=true to enable'
  },
  ADMIN_AUTH_REQUIRED: { status: 401, message: 'Authentication required for admin write operations' },
  ADMIN_ROLE_REQUIRED: { status: 403, message: 'Forbidden: caller lacks required role' },
  ADMIN_FORBIDDEN: { status: 403, message: 'Forbidden' },
  ADMIN_READ_AUTH_REQUIRED: {
    status: 401,
    message: 'Admin read operations require authentication',
    hint: 'Send X-Platform-Auth header or disable platform.admin.http-read-auth-required'
  },
  ADMIN_CONTENT_READ_AUTH_REQUIRED: {
    status: 401,
    message: 'Admin read operations require authentication',
    hint: 'Send X-Platform-Auth header or disable platform.admin.content-read-auth-required'
  },
  ADMIN_WORKSPACE_READ_AUTH_REQUIRED: {
    status: 401,
    message: 'Admin read operations require authentication',
    hint: 'Send X-Platform-Auth header or disable platform.admin.workspace-read-auth-required'
  },

  // --- transport ---
  UNKNOWN_RESOURCE: { status: 404, message: (p) => `Unknown resource '${p.uuid}'` },
  UNKNOWN_BROADCASTER: { status: 404, message: (p) => `Unknown broadcaster '${p.id}'` },
  INVALID_ROOM: { status: 400, message: (p) => `Invalid room name '${p.room}': use 1-128 of A-Z a-z 0-9 _ - . :` },
  MISSING_BROADCAST_FIELDS: { status: 400, message: "missing 'broadcasterId' or 'message' field" },
  MISSING_RESOURCE_ID: {
    status: 400,
    message: 'Missing sender resource uuid',
    hint: 'Send the uuid and token from the joined frame as the X-Platform-Resource and X-Platform-Token headers (or the uuid and token query parameters)'
  },
  RESOURCE_FORBIDDEN: {
    status: 403,
    message: (p) => `Not allowed to act as resource '${p.uuid}': missing or wrong token`,
    hint: 'An SSE or long-polling member sends the token from its own joined frame as X-Platform-Token (or the token query parameter); a WebSocket member speaks over its socket only'
  },
  ROOM_AUTH_REQUIRED: {
    status: 401,
    message: (p) => `Room '${p.room}' requires an authenticated principal`,
    hint: 'Send an API token (Authorization: Bearer or X-Platform-Auth) or a JWT; platform.transport.rooms.auth=open lets anyone join'
  },
  ROOM_JOIN_DENIED: { status: 403, message: (p) => `Joining room '${p.room}' denied: ${p.reason}` },
  RATE_LIMITED: {
    status: 429,
    message: (p) => `Too many messages: at most ${p.perSecond} per second (burst ${p.burst})`,
    hint: 'Wait for Retry-After seconds; platform.transport.rooms.max-messages-per-second sets the rate'
  },
  INVALID_PRESENCE: {
    status: 400,
    message: (p) => `Invalid presence '${p.value}': use 'true' or 'false'`,
    hint: "Query parameter presence or header X-Platform-Presence; 'false' joins the room without announcing the member"
  },

  // --- interactions ---
  INTERACTIONS_WRITE_DISABLED: {
    status: 403,
    message: 'Interaction write operations disabled',
    hint: 'Set platform.interactions.http-write-enabled=true to enable'
  },
  INTERACTIONS_AUTH_REQUIRED: {
    status: 401,
    message: 'Authentication required for interaction write operations',
    hint: 'Send an API token (Authorization: Bearer or X-Platform-Auth) or a JWT'
  },
  INTERACTION_ID_INVALID: {
    status: 400,
    message: 'Invalid interaction id',
    hint: 'An interaction id matches ^[A-Za-z0-9_-]{1,128}$'
  },
  INTERACTION_NOT_FOUND: { status: 404, message: (p) => `Unknown interaction '${p.id}'` },
  STORE_UNAVAILABLE: {
    status: 503,
    message: (p) => `${p.store} cannot be reached`,
    hint: 'Retry once the server is back (GET /readyz reports it); what was acknowledged before is kept'
  },
  INTERACTION_MESSAGE_MISSING: { status: 400, message: "missing 'message' field" },
  INTERACTION_PREVIOUS_UNKNOWN: { status: 400, message: 'Unknown or unauthorized previous interaction' },
  INTERACTION_UNKNOWN_AGENT: {
    status: 400,
    message: (p) => `Unknown agent '${p.agentId}'`,
    hint: 'agentId names an agent that a loaded plugin contributes'
  },
  IDEMPOTENCY_KEY_INVALID: {
    status: 400,
    message: 'Invalid Idempotency-Key header: use 1 to 255 visible ASCII characters'
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 409,
    message: 'Idempotency-Key already used with a different request',
    hint: 'A retry resends the same body to the same route; a new request takes a new key'
  },

  // --- agent endpoint ---
  // one code for an unknown agent wherever it is named: the agent endpoints (by path) and admin (by name)
  AGENT_NOT_FOUND: {
    status: 404,
    message: (p) => `Unknown agent '${p.agent}'`,
    hint: 'Check the agent name: only agents of loaded plugins answer, and one unloaded by hot reload is gone until its plugin returns'
  },
  AGENT_AUTH_REQUIRED: {
    status: 401,
    message: (p) => `${p.path} requires an authenticated principal`,
    hint: 'Send an API token (Authorization: Bearer or X-Platform-Auth) or a JWT; platform.ai.endpoint.auth=open lets anyone talk to agents'
  },
  A2A_NO_ROOT_AGENT: {
    status: 404,
    message: (p) => `No agent card at the host's root: ${String(p.detail)}`,
    hint: "Set platform.a2a.root-agent; every agent's own card is at {agent path}/.well-known/agent-card.json"
  },
  INVALID_AGUI_INPUT: {
    status: 400,
    message: (p) => `Invalid AG-UI RunAgentInput: ${p.detail}`,
    hint: 'POST {"threadId", "runId", "messages": [..., {"id", "role": "user", "content"}]}; state, tools, context and forwardedProps are optional'
  },

  // --- admin control plane ---
  MISSING_UNICAST_FIELDS: { status: 400, message: "missing 'broadcasterId', 'uuid' or 'message' field" },
  RESOURCE_NOT_RESUMABLE: {
    status: 409,
    message: (p) => `Resource '${p.uuid}' is a ${p.transport} connection; only a long-polling resource can be resumed`,
    hint: 'Resume answers the held poll of a long-polling client; DELETE /api/admin/resources/{uuid} ends any connection'
  },
  UNKNOWN_CONVERSATION: { status: 404, message: (p) => `No conversation '${p.id}'` },
  UNKNOWN_FACT: {
    status: 404,
    message: (p) => `No fact '${p.id}' under ${p.namespace}`,
    hint: 'GET /api/admin/agents/{name}/facts with the same userId or sessionId lists the ids'
  },
  AGENT_STATE_NOT_WIRED: {
    status: 503,
    message: 'State controller not wired',
    hint: 'Facts are the governance memory sink: set platform.ai.governance.memory.enabled=true (governance enabled)'
  },
  UNKNOWN_COORDINATOR: { status: 404, message: (p) => `Unknown coordinator '${p.name}'` },
  UNKNOWN_COORDINATION: { status: 404, message: (p) => `Unknown coordination '${p.id}'` },
  UNKNOWN_TASK: { status: 404, message: (p) => `Unknown task '${p.id}'` },
  TASK_NOT_CANCELABLE: { status: 409, message: (p) => `Task not cancelable: ${p.id}` },
  NO_PENDING_APPROVAL: { status: 404, message: (p) => `No pending approval: ${p.id}` },
  WORKFLOW_INVALID: { status: 400, message: (p) => `Invalid workflow: ${p.detail}` },
  WORKFLOW_VERSION_CONFLICT: {
    status: 409,
    message: (p) => String(p.detail),
    hint: 'GET the workflow, apply your change to it and save it with its version + 1'
  },
  WORKFLOW_STORAGE_FAILURE: { status: 500, message: (p) => `workflow ${p.id} could not be stored` },
  UNKNOWN_WORKFLOW: { status: 404, message: (p) => `no workflow: ${p.id}` },
  WORKFLOW_COORDINATOR_REQUIRED: {
    status: 400,
    message: 'coordinator must be specified — zero or multiple fleets are registered',
    hint: 'Name one with ?coordinator=; GET /api/admin/coordinators lists them'
  },
  UNKNOWN_WORKFLOW_COORDINATOR: {
    status: 400,
    message: (p) => `unknown coordinator: ${p.name} (registered: [${p.registered}])`
  },
  WORKFLOW_NOT_RUNNABLE: {
    status: 400,
    message: (p) => String(p.detail),
    hint: 'Fix the workflow (POST /api/admin/workflow with its version + 1) and run it again'
  },
  WORKFLOW_RUNS_FULL: {
    status: 503,
    message: (p) => `${p.limit} workflow runs are still going (the limit); none can start until one ends`,
    hint: 'Decide or let expire the pending approvals (GET /api/admin/workflow/approvals), then retry'
  },
  UNKNOWN_WORKFLOW_RUN: {
    status: 404,
    message: (p) => `Unknown workflow run '${p.id}'`,
    hint: 'Only the last 500 runs are kept, in memory; GET /api/admin/workflow/runs lists them'
  },
  EVAL_RUN_INVALID: { status: 400, message: (p) => `Invalid eval run: ${p.detail}` },
  EVAL_RUN_EXISTS: { status: 400, message: (p) => `EvalRun id ${p.id} already exists; eval runs are immutable` },
  UNKNOWN_EVAL_RUN: { status: 404, message: (p) => `Unknown eval run '${p.id}'` },
  NO_ACTIVE_RUNTIME: {
    status: 404,
    message: 'No active AI runtime',
    hint: 'platform.ai.runtime names the runtime; GET /api/admin/runtimes lists those known and whether each is available'
  },

  // --- governance ---
  GOVERNANCE_NOT_INSTALLED: {
    status: 503,
    message: 'governance controller not installed',
    hint: 'Set platform.ai.governance.enabled=true'
  },
  GOVERNANCE_NO_KILL_SWITCH: {
    status: 409,
    message: 'no KillSwitchPolicy installed on this framework',
    hint: 'Add a policy of type kill-switch to a policy file or set platform.ai.governance.kill-switch.enabled=true'
  },
  GOVERNANCE_REASON_BLANK: { status: 400, message: 'reason must not be blank' },
  RELOAD_SWAP_NAME_BLANK: { status: 400, message: 'swapName must not be blank' },
  RELOAD_CONTENT_BLANK: { status: 400, message: 'policy content must not be blank' },
  RELOAD_UNKNOWN_SWAP: { status: 400, message: (p) => String(p.detail) },
  RELOAD_UNKNOWN_FORMAT: { status: 400, message: (p) => String(p.detail) },
  RELOAD_PARSE_FAILED: { status: 400, message: (p) => String(p.detail) },
  RELOAD_EMPTY: { status: 400, message: (p) => String(p.detail) }
} satisfies Record<string, ErrorDef>

export type ErrorName = keyof typeof ERRORS

/** An error that maps to one catalogue entry; thrown anywhere under a route handler. */
export class PlatformError extends Error {
  readonly status: number
  readonly code: string
  readonly hint: string | undefined
  readonly extra: Record<string, unknown> | undefined

  constructor(name: ErrorName, params: Record<string, unknown> = {}, extra?: Record<string, unknown>) {
    const def: ErrorDef = ERRORS[name]
    super(typeof def.message === 'function' ? def.message(params) : def.message)
    this.name = 'PlatformError'
    this.status = def.status
    this.code = `PLT_ERR_${name}`
    this.hint = def.hint
    this.extra = extra
  }

  body(): Record<string, unknown> {
    const b: Record<string, unknown> = { error: this.message, code: this.code }
    if (this.hint !== undefined) b.hint = this.hint
    if (this.extra !== undefined) Object.assign(b, this.extra)
    return b
  }
}

export function errorCodes(): string[] {
  return Object.keys(ERRORS).map((k) => `PLT_ERR_${k}`)
}
