/**
 * Workflows: manifests kept in a WorkflowStore, runs of them on a coordinator of the fleet (its
 * dispatcher calls the agents, its journal records the run's coordination), the approvals runs
 * wait for, and the routes under /api/admin that serve all of it. Without the admin control plane
 * (`platform.admin.enabled=false`) nothing can start a run, so the area serves and provides nothing.
 */
import type { Area, Platform } from '../platform.js'
import { ADMIN, mountAreaRoutes } from '../admin/index.js'
import { FLEET } from '../fleet/index.js'
import { WORKFLOWS } from './key.js'
import type { WorkflowManifest } from './workflow-manifest.js'
import { workflowRoutes } from './workflow-routes.js'
import { platformWorkflowRuns } from './workflow-runs.js'
import { LmdbWorkflowStore, MemoryWorkflowStore, type WorkflowStore } from './workflow-store.js'
import type { WorkflowsService } from './workflows-service.js'
import { WORKFLOWS_CONFIG_KEYS } from './config-keys.js'
import { WORKFLOWS_ERRORS } from './errors.js'

function workflowStore(platform: Platform): WorkflowStore {
  if (platform.config.get('platform.admin.workflows.store') === 'memory') return new MemoryWorkflowStore()
  return new LmdbWorkflowStore(platform.store.db<WorkflowManifest, string>('workflows'))
}

export function installWorkflows(platform: Platform): void {
  if (!platform.hasArea(ADMIN)) return
  const fleet = platform.area(FLEET)
  // registered after the fleet's journal hook, so it runs before it: a run stopped at close journals its end
  const runs = platformWorkflowRuns(platform, fleet.dispatcher, fleet.emitJournal)
  const routes = workflowRoutes({
    store: workflowStore(platform),
    runs,
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
