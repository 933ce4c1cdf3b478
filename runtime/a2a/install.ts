/**
 * The A2A area: every agent the plugins contribute is also an A2A 1.0 server. It keeps the
 * tasks and their push notification configs (delivered through the webhooks area), tells the AI
 * area where each agent is served (the `a2a` protocol badge) and hands the admin area its task
 * view. `platform.a2a.enabled=false` leaves all of it out.
 */
import type { Area, Platform } from '../platform.js'
import { ADMIN_TASK_VIEW } from '../admin/index.js'
import { AI, AI_AGENT_PROTOCOLS } from '../ai/index.js'
import { WEBHOOKS } from '../webhooks/index.js'
import { PushConfigs } from './push-configs.js'
import { installA2aEndpoint } from './a2a-endpoint.js'
import { A2aMethods } from './a2a-methods.js'
import type { A2aService } from './a2a-service.js'
import { A2A } from './key.js'
import { TaskStore } from './task-store.js'
import { taskRecordsFromConfig } from './task-records-from-config.js'
import { taskView } from './task-view.js'
import { A2A_CONFIG_KEYS } from './config-keys.js'
import { A2A_ERRORS } from './errors.js'

export async function installA2a(platform: Platform): Promise<void> {
  const { config } = platform
  if (!config.get('platform.a2a.enabled')) return
  const ai = platform.area(AI)
  const max = config.get('platform.a2a.max-tasks')
  const retentionMs = config.get('platform.a2a.task-retention-ms')
  const pushLimits = {
    perTask: config.get('platform.a2a.push.max-configs-per-task'),
    perCaller: config.get('platform.a2a.push.max-configs-per-principal')
  }
  const records = taskRecordsFromConfig(platform, {
    node: platform.node.id,
    limits: {
      max,
      perPrincipal: config.get('platform.a2a.tasks.max-per-principal'),
      perAddress: config.get('platform.a2a.tasks.max-per-address'),
      reserve: config.get('platform.a2a.tasks.authenticated-reserve') ?? Math.floor(max / 10)
    },
    retentionMs,
    push: pushLimits,
    // the same lease as the interactions' runs: a lost node's tasks end within about 1.5 of it
    leaseMs: config.get('platform.cluster.lease-ms')
  })
  const push = new PushConfigs(platform.area(WEBHOOKS), pushLimits, records, platform.logger)
  const store = new TaskStore({
    records,
    bus: platform.bus,
    backplane: platform.backplane(),
    logger: platform.logger,
    onEvent: (t, e) => push.notify(t, e),
    retentionMs
  })
  const interrupted = await store.start()
  if (interrupted > 0)
    platform.logger.warn({ interrupted }, 'A2A tasks running when this node stopped were marked failed')
  platform.onClose(() => records.stop())
  // at shutdown, before the server waits for its open responses: a blocking SendMessage is one
  platform.http.onShutdown(() => store.close())
  const endpoint = installA2aEndpoint(platform, new A2aMethods(ai, store, platform.logger, push), {
    pushNotifications: push.available,
    publicUrl: config.get('platform.a2a.public-url'),
    allTasksRole: config.get('platform.a2a.all-tasks-role'),
    rootAgent: config.get('platform.a2a.root-agent')
  })
  platform.extend(AI_AGENT_PROTOCOLS, { protocol: 'a2a', pathOf: (agent) => endpoint.pathOf(agent) })
  platform.extend(ADMIN_TASK_VIEW, taskView(store))
  const service: A2aService = {
    tasks: store,
    pathOf: (name) => {
      const agent = platform.plugins.agents().find((a) => a.name === name)
      return agent === undefined ? undefined : endpoint.pathOf(agent)
    }
  }
  platform.provide(A2A, service)
}

export const a2aArea: Area = {
  name: 'a2a',
  dependsOn: ['ai', 'admin', 'webhooks'],
  configKeys: A2A_CONFIG_KEYS,
  errors: A2A_ERRORS,
  install: installA2a
}
