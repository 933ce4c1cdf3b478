/** `GET /cluster` and the per-node counts: what the heartbeats of the other nodes say, beside this node's own. */
import type { AdminDeps } from './admin-deps.js'
import type { AdminRoute } from './route-table.js'
import type { NodeCount } from './cluster-nodes.js'

/** Connections and broadcasters per node and in total (over the nodes up). */
export interface ClusterCounts {
  connections: number
  broadcasters: number
  nodes: NodeCount[]
}

export function clusterCounts(rows: readonly NodeCount[]): ClusterCounts {
  const out: ClusterCounts = { connections: 0, broadcasters: 0, nodes: [] }
  for (const r of rows) {
    out.nodes.push({ node: r.node, state: r.state, connections: r.connections, broadcasters: r.broadcasters })
    if (r.state !== 'up') continue
    out.connections += r.connections
    out.broadcasters += r.broadcasters
  }
  return out
}

export function clusterRoutes(d: AdminDeps): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/cluster',
      summary:
        'The nodes: node, state (up, or down after missed heartbeats), self, version, startedAt, lastHeartbeat, connections, broadcasters, runsOwned, load, fingerprint of the plugin set and policies, fingerprintDiffers',
      gate: { read: 'open' },
      handler: () => {
        const backplane = d.platform.backplane()
        const nodes = d.nodes.rows()
        return {
          node: d.platform.node.id,
          clustered: d.platform.config.get('platform.cluster.enabled'),
          backplane: { kind: backplane.kind, available: backplane.available(), dropped: backplane.dropped },
          consistent: nodes.every((n) => !n.fingerprintDiffers),
          nodes
        }
      }
    },
    {
      method: 'GET',
      path: '/resources/counts',
      summary: 'Connected resources and broadcasters per node and in total (the nodes up)',
      gate: { read: 'open' },
      handler: () => ({ node: d.platform.node.id, ...clusterCounts(d.nodes.counts()) })
    }
  ]
}
