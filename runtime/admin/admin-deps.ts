import type { Platform } from '../platform.js'
import type { Transport } from '../transport/index.js'
import type { AiService } from '../ai/index.js'
import type { GovernanceService } from '../governance/index.js'
import type { McpServer } from '../mcp/index.js'
import type { FleetView } from './fleet-view.js'
import type { TaskView } from './task-view.js'
import type { ClusterNodes } from './cluster-nodes.js'

/** The live state the admin routes read, resolved once at install. */
export interface AdminDeps {
  platform: Platform
  transport: Transport
  ai: AiService
  /** Undefined when governance is switched off. */
  governance: GovernanceService | undefined
  /** Undefined when MCP is switched off. */
  mcp: McpServer | undefined
  /** The fleet added at ADMIN_FLEET_VIEW, read per request; EMPTY_FLEET while none is. */
  readonly fleet: FleetView
  /** The A2A tasks added at ADMIN_TASK_VIEW, read per request; EMPTY_TASKS while none is. */
  readonly tasks: TaskView
  /** The platform's version (package.json). */
  version: string
  /** The nodes of the cluster as their heartbeats say (this one alone when there is no cluster). */
  nodes: ClusterNodes
}
