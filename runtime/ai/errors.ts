import { defineErrors } from '../contracts/index.js'

/**
 * The AI area's codes, shared by every endpoint that names an agent (agent endpoints, AG-UI, A2A, admin).
 */
export const AI_ERRORS = defineErrors({
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
  INVALID_AGUI_INPUT: {
    status: 400,
    message: (p) => `Invalid AG-UI RunAgentInput: ${p.detail}`,
    hint: 'POST {"threadId", "runId", "messages": [..., {"id", "role": "user", "content"}]}; state, tools, context and forwardedProps are optional'
  },
  /** A chat-completions server failed a turn; `aiCode` is the error event's code (timeout, network, protocol, ...). */
  AI_UPSTREAM_FAILED: { status: 500, internal: true, message: (p) => String(p.detail) },
  /** A stream that is not server-sent events, or a line longer than the bound. */
  AI_SSE_MALFORMED: { status: 500, internal: true, message: (p) => String(p.detail) }
})
