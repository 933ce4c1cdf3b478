/**
 * The admin control plane: the REST routes under /api/admin (the governance area serves
 * /api/admin/governance itself). `platform.admin.enabled=false` leaves every route out.
 */
import type { Area, Platform } from '../platform.js'
import { NODE_COUNTS } from '../contracts/index.js'
import { transportOf } from '../transport/index.js'
import { AI } from '../ai/index.js'
import { governanceOf } from '../governance/index.js'
import { getMcp } from '../mcp/index.js'
import type { AdminDeps } from './admin-deps.js'
import type { AdminService } from './admin-service.js'
import { agentRoutes } from './agent-routes.js'
import { catalogRoutes } from './catalog-routes.js'
import type { EvalRun } from './eval-run.js'
import { LmdbEvalRunStore, MemoryEvalRunStore, type EvalIndexKey, type EvalRunStore } from './eval-run-store.js'
import { evalRoutes } from './eval-routes.js'
import { PostgresEvalRunStore } from './postgres-eval-run-store.js'
import { storeKindOf } from '../config/index.js'
import { installEventStream } from './event-stream.js'
import { streamDecisions } from './decision-events.js'
import { installAdminMcpTools } from './admin-mcp-tools.js'
import { EMPTY_FLEET } from './fleet-view.js'
import { fleetRoutes } from './fleet-routes.js'
import { EMPTY_TASKS } from './task-view.js'
import { ADMIN, ADMIN_FLEET_VIEW, ADMIN_TASK_VIEW } from './key.js'
import { dashboardDir, mountDashboard, readDashboard } from './dashboard-files.js'
import { metricsRoutes } from './metrics-report.js'
import { openApiDocument } from './openapi.js'
import { overviewRoutes } from './overview.js'
import { MetricsHistoryRecorder } from './metrics-history.js'
import { mountRoutes, type AdminRoute } from './route-table.js'
import { transportRoutes } from './transport-routes.js'
import { ClusterNodes, fingerprintOf } from './cluster-nodes.js'
import { clusterRoutes } from './cluster-routes.js'
import { ADMIN_CONFIG_KEYS } from './config-keys.js'
import { ADMIN_ERRORS } from './errors.js'

/** Every admin route, in mount order. */
export function adminRoutes(d: AdminDeps, history: MetricsHistoryRecorder): AdminRoute[] {
  return [
    ...overviewRoutes(d, history),
    ...transportRoutes(d),
    ...agentRoutes(d),
    ...fleetRoutes(d),
    ...catalogRoutes(d),
    ...metricsRoutes(d),
    ...clusterRoutes(d)
  ]
}

const EVALS_STORE_KEY = 'platform.admin.evals.store'

/** The store `platform.admin.evals.store` names (`postgres` by default in cluster mode), started. */
async function evalStore(platform: Platform): Promise<EvalRunStore> {
  const cap = platform.config.get('platform.admin.evals.max-runs-per-baseline')
  switch (storeKindOf(platform.config, EVALS_STORE_KEY)) {
    case 'memory':
      return new MemoryEvalRunStore(cap)
    case 'postgres': {
      const store = new PostgresEvalRunStore(await platform.postgres(`${EVALS_STORE_KEY} is postgres`), cap)
      await store.start()
      return store
    }
    default:
      return new LmdbEvalRunStore(
        platform.store.db<EvalRun, string>('eval-runs'),
        platform.store.db<true, EvalIndexKey>('eval-runs-by-baseline'),
        cap
      )
  }
}

export async function installAdmin(platform: Platform): Promise<void> {
  if (!platform.config.get('platform.admin.enabled')) return
  // first: a store that cannot open stops the start before any route or timer exists
  const evals = await evalStore(platform)
  const transport = transportOf(platform)
  const governance = governanceOf(platform)
  // the stream asks the heartbeats whether another node is watched only once events flow, after install
  const events = installEventStream(platform, () => nodes.watchedElsewhere())
  const nodes = new ClusterNodes({
    node: platform.node.id,
    backplane: platform.backplane(),
    periodMs: platform.config.get('platform.admin.cluster.heartbeat-ms'),
    read: () => ({
      version: platform.version,
      startedAt: platform.node.startedAt,
      connections: transport.resourceCount,
      broadcasters: transport.broadcasterCount,
      runsOwned: platform
        .extensions(NODE_COUNTS)
        .filter((c) => c.name === 'runsOwned')
        .reduce((n, c) => n + c.read(), 0),
      watched: events.watched
    }),
    fingerprint: () =>
      fingerprintOf(
        platform.plugins.status().map((p) => `${p.name}@${p.version ?? ''}:${p.state}`),
        governance?.listing().map((p) => `${String(p.name)}:${String(p.className)}:${String(p.digest)}`) ?? []
      )
  })
  const deps: AdminDeps = {
    platform,
    transport,
    ai: platform.area(AI),
    governance,
    mcp: getMcp(platform),
    // read at use time: the fleet and A2A areas install after this one
    get fleet() {
      return platform.extensions(ADMIN_FLEET_VIEW).at(-1) ?? EMPTY_FLEET
    },
    get tasks() {
      return platform.extensions(ADMIN_TASK_VIEW).at(-1) ?? EMPTY_TASKS
    },
    version: platform.version,
    nodes
  }
  const history = new MetricsHistoryRecorder(() => ({
    connections: deps.transport.resourceCount,
    sessions: deps.ai.sessions.activeCount()
  }))
  platform.onClose(history.follow(platform))
  const routes = [...adminRoutes(deps, history), ...evalRoutes(evals)]
  // built on first request, once: the table does not change after start-up
  let document: Record<string, unknown> | undefined
  routes.push({
    method: 'GET',
    path: '/openapi.json',
    summary: 'This API as an OpenAPI 3.1 document, generated from the route table',
    gate: { read: 'open' },
    handler: () =>
      (document ??= openApiDocument(
        routes,
        deps.version,
        platform.http.describedRoutes(),
        // read on the first request, when every area is installed
        Object.values(platform.errors).flatMap((d) => (d.internal === true ? [] : [d.code]))
      ))
  })
  mountRoutes(platform, routes)
  const dir = dashboardDir()
  if (dir !== undefined) mountDashboard(platform, readDashboard(dir))
  nodes.start()
  platform.onClose(() => {
    nodes.stop()
  })
  if (deps.governance !== undefined) streamDecisions(deps.governance.decisionLog, events)
  if (deps.mcp !== undefined && platform.config.get('platform.admin.mcp-tools')) installAdminMcpTools(platform, routes)
  const service: AdminService = { routes }
  platform.provide(ADMIN, service)
}

export const adminArea: Area = {
  name: 'admin',
  dependsOn: ['transport', 'governance', 'mcp', 'ai'],
  configKeys: ADMIN_CONFIG_KEYS,
  errors: ADMIN_ERRORS,
  install: installAdmin
}
