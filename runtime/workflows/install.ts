/**
 * Workflows: manifests kept in a WorkflowStore, runs of them on a coordinator of the fleet (its
 * dispatcher calls the agents, its journal records the run's coordination), the approvals runs
 * wait for, and the routes under /api/admin that serve all of it. With the store in PostgreSQL,
 * run records and decisions are shared too: a run started on one node is read and approved on
 * any. Without the admin control plane (`platform.admin.enabled=false`) nothing can start a run,
 * so the area serves and provides nothing.
 */
import type { Area, Platform } from '../platform.js'
import { ADMIN, mountAreaRoutes } from '../admin/index.js'
import { FLEET } from '../fleet/index.js'
import { WORKFLOWS } from './key.js'
import type { WorkflowManifest } from './workflow-manifest.js'
import { workflowRoutes } from './workflow-routes.js'
import { DEFAULT_MAX_RUNS, localRunReads, platformWorkflowRuns } from './workflow-runs.js'
import { PostgresWorkflowRunStore } from './postgres-workflow-runs.js'
import { SharedRunReads } from './shared-run-reads.js'
import type { PostgresDb } from '../store/index.js'
import { LmdbWorkflowStore, MemoryWorkflowStore, type WorkflowStore } from './workflow-store.js'
import { PostgresWorkflowStore } from './postgres-workflow-store.js'
import { storeKindOf } from '../config/index.js'
import type { WorkflowsService } from './workflows-service.js'
import { WORKFLOWS_CONFIG_KEYS } from './config-keys.js'
import { WORKFLOWS_ERRORS } from './errors.js'

const STORE_KEY = 'platform.admin.workflows.store'

/** The manifest store: on `db` when workflows are kept in PostgreSQL (started), else as the key says. */
async function workflowStore(platform: Platform, db: PostgresDb | undefined): Promise<WorkflowStore> {
  if (db !== undefined) {
    const store = new PostgresWorkflowStore(db)
    await store.start()
    return store
  }
  if (platform.config.get(STORE_KEY) === 'memory') return new MemoryWorkflowStore()
  return new LmdbWorkflowStore(platform.store.db<WorkflowManifest, string>('workflows'))
}

export async function installWorkflows(platform: Platform): Promise<void> {
  if (!platform.hasArea(ADMIN)) return
  // `postgres` (the default in cluster mode): manifests and run records shared by every node
  const db =
    storeKindOf(platform.config, STORE_KEY) === 'postgres'
      ? await platform.postgres(`${STORE_KEY} is postgres`)
      : undefined
  const store = await workflowStore(platform, db)
  const shared =
    db === undefined ? undefined : new PostgresWorkflowRunStore(db, platform.node.id, DEFAULT_MAX_RUNS, platform.logger)
  const interrupted = (await shared?.start()) ?? 0
  if (interrupted > 0)
    platform.logger.warn({ interrupted }, 'workflow runs this node left going when it stopped marked FAILED')
  const fleet = platform.area(FLEET)
  // registered after the fleet's journal hook, so it runs before it: a run stopped at close journals its end
  const runs = platformWorkflowRuns(platform, fleet.dispatcher, fleet.emitJournal, shared)
  let reads = localRunReads(runs)
  if (shared !== undefined) {
    const sharedReads = new SharedRunReads(runs, shared, platform.backplane(), platform.logger)
    platform.onClose(() => sharedReads.close())
    reads = sharedReads
  }
  const routes = workflowRoutes({
    store,
    runs,
    reads,
    coordinators: () => fleet.coordinatorNames(),
    logger: platform.logger
  })
  mountAreaRoutes(platform, routes)
  const service: WorkflowsService = { routes }
  platform.provide(WORKFLOWS, service)
}

export const workflowsArea: Area = {
  name: 'workflows',
  dependsOn: ['admin', 'fleet'],
  configKeys: WORKFLOWS_CONFIG_KEYS,
  errors: WORKFLOWS_ERRORS,
  install: installWorkflows
}
