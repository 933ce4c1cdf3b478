/** `GET /overview`: one snapshot from counts the owners keep, never a walk over connections. */
import type { AdminDeps } from './admin-deps.js'
import type { AdminRoute } from './route-table.js'
import { interceptors } from './transport-routes.js'
import type { MetricsHistoryRecorder } from './metrics-history.js'
import { clusterCounts } from './cluster-routes.js'

export function overview(d: AdminDeps): Record<string, unknown> {
  const out: Record<string, unknown> = {
    status: 'UP',
    version: d.version,
    // which node answered: behind a load balancer, each node answers for itself
    node: d.platform.node.id,
    connections: d.transport.resourceCount,
    broadcasters: d.transport.broadcasterCount,
    handlers: d.transport.handlers.length,
    interceptors: interceptors(d).length,
    agentCount: d.platform.plugins.agents().length,
    activeSessions: d.ai.sessions.activeCount(),
    coordinatorCount: d.fleet.coordinatorCount,
    taskCount: d.tasks.taskCount,
    // the counts above are this node's; these are every node's, from their heartbeats
    cluster: clusterCounts(d.nodes.counts())
  }
  const runtime = d.ai.activeRuntime()
  if (runtime !== undefined) out.aiRuntime = runtime.name
  if (d.governance !== undefined) out.governancePolicyCount = d.governance.chain.policies.length
  return out
}

export function overviewRoutes(d: AdminDeps, history: MetricsHistoryRecorder): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/overview',
      summary:
        'status, version, node, connections, broadcasters, handlers, interceptors, agentCount, activeSessions, coordinatorCount, taskCount (this node), cluster (connections and broadcasters in total and per node), aiRuntime?, governancePolicyCount?',
      gate: { read: 'open' },
      handler: () => overview(d)
    },
    {
      method: 'GET',
      path: '/metrics/history',
      summary:
        'The last hour in per-minute points (turns, errors, denials, tokensPerSecond, p50, p95 in ms, connections, sessions), oldest first, and per agent turns, errors and p95 since start-up',
      gate: { read: 'open' },
      handler: () => history.read()
    }
  ]
}
