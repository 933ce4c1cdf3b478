/** A2A 1.0: every agent served over JSON-RPC at `{agent path}/a2a`, its Agent Card, its tasks. */
export { remoteAgents } from './remote-agent.js'
