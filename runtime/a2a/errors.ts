import { defineErrors } from '../contracts/index.js'

/**
 * The A2A area's codes (its other JSON-RPC errors are in `rpc-error.ts`). A capacity refusal is a
 * JSON-RPC -32603, the code A2A gives a temporary failure such as an exceeded rate limit, with the
 * HTTP status that tells a client whether it alone is over (429) or the server is full (503).
 */
export const A2A_ERRORS = defineErrors({
  A2A_NO_ROOT_AGENT: {
    status: 404,
    message: (p) => `No agent card at the host's root: ${String(p.detail)}`,
    hint: "Set platform.a2a.root-agent; every agent's own card is at {agent path}/.well-known/agent-card.json"
  },
  A2A_TASK_QUOTA: {
    status: 429,
    rpcCode: -32603,
    message: (p) =>
      `Too many A2A tasks for ${String(p.who)}: all ${String(p.limit)} of its tasks are still running (${String(p.key)}); wait for one to finish or cancel one`,
    hint: 'A finished task makes room for the next one of the same caller at once'
  },
  A2A_TASK_CAPACITY: {
    status: 503,
    rpcCode: -32603,
    message: (p) =>
      p.scope === 'anonymous'
        ? `Too many anonymous A2A tasks: anonymous callers hold their limit of ${String(p.limit)} running tasks; the rest of platform.a2a.max-tasks is kept for authenticated principals (${String(p.key)})`
        : `Too many A2A tasks: the server holds its limit of ${String(p.limit)} tasks, and no anonymous task and none of the caller's own has finished (${String(p.key)})`,
    hint: 'Finished tasks make room; authenticated principals keep platform.a2a.tasks.authenticated-reserve of the cap'
  },
  A2A_MESSAGE_TOO_LARGE: {
    status: 413,
    rpcCode: -32600,
    message: (p) =>
      `Request body too large: an A2A request is at most ${String(p.limit)} bytes (platform.ai.endpoint.max-message-bytes, capped by platform.server.body-limit-bytes)`,
    hint: 'Send a shorter message, or raise platform.ai.endpoint.max-message-bytes'
  }
})
