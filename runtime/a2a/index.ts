/** A2A 1.0: every agent served over JSON-RPC at `{agent path}/a2a`, its Agent Card, its tasks. */
export { A2A } from './key.js'
export type { A2aService } from './a2a-service.js'
export type { TaskRecord, TaskStore, Viewer } from './task-store.js'
export {
  TASK_STATES,
  TERMINAL_STATES,
  type TaskState,
  type Task,
  type Message,
  type Part,
  type Artifact,
  type StreamResponse
} from './a2a-types.js'
export { a2aPath } from './a2a-endpoint.js'
export { A2aClient, A2aCallError, type A2aClientOptions, type RemoteOutcome } from './a2a-client.js'
export { A2aAgentTransport, remoteAgentEnvName, remoteAgentUrl, remoteAgents } from './remote-agent.js'
export { A2A_ERRORS } from './errors.js'
