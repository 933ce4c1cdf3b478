import { defineErrors } from '../contracts/index.js'

/**
 * The A2A area's REST codes (its JSON-RPC errors are in `rpc-error.ts`).
 */
export const A2A_ERRORS = defineErrors({
  A2A_NO_ROOT_AGENT: {
    status: 404,
    message: (p) => `No agent card at the host's root: ${String(p.detail)}`,
    hint: "Set platform.a2a.root-agent; every agent's own card is at {agent path}/.well-known/agent-card.json"
  }
})
