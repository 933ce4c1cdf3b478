import type { Area, Platform } from '../platform.js'
import { AI, AI_AGENT_RUNS } from '../ai/index.js'
import { ADMIN_FLEET_VIEW } from '../admin/index.js'
import { remoteAgents } from '../a2a/index.js'
import { COMMITMENTS } from '../governance/index.js'
import { adminFleetView } from './admin-fleet-view.js'
import { CircuitBreakers } from './circuit-breakers.js'
import { coordinatorCalls } from './coordinator-calls.js'
import { Dispatcher } from './dispatcher.js'
import { FleetRegistry } from './fleet-registry.js'
import type { FleetService } from './fleet-service.js'
import type { AgentTransport, JournalStore } from './fleet-types.js'
import { governanceInterceptor } from './governance-interceptor.js'
import { FleetInterceptors } from './interceptors.js'
import { JournalWriter } from './journal-writer.js'
import { FLEET } from './key.js'
import { LocalTransport } from './local-transport.js'
import { journalStore } from './journal-store.js'
import { FLEET_CONFIG_KEYS } from './config-keys.js'

/**
 * The agent fleet: coordinators (agents that declare a fleet), the dispatcher that calls their
 * agents, the coordination journal. It hands the admin area its FleetView; the workflows area runs
 * workflows through its dispatcher and journal.
 */
export const fleetArea: Area = {
  name: 'fleet',
  dependsOn: ['governance', 'ai', 'admin', 'a2a'],
  configKeys: FLEET_CONFIG_KEYS,
  install: installFleet
}

export async function installFleet(platform: Platform): Promise<void> {
  const store: JournalStore = await journalStore(platform)
  const journal = new JournalWriter(store, platform.logger, platform.config.get('platform.fleet.journal.flush-ms'))
  // registered before the workflows area installs, so it runs after that area's hook: a workflow
  // run stopped at close still journals its end
  platform.onClose(async () => {
    await journal.settled()
    await store.close()
  })
  const registry = new FleetRegistry(platform.plugins, platform.logger)
  // a cycle is logged when the plugin that closes it loads, not at its first dispatch
  platform.bus.on('PluginsChanged', () => registry.refresh())
  registry.refresh()
  const breakers = new CircuitBreakers(
    platform.config.get('platform.fleet.circuit-breaker.failure-threshold'),
    platform.config.get('platform.fleet.circuit-breaker.open-ms')
  )
  const interceptors = new FleetInterceptors()
  interceptors.add(governanceInterceptor(platform))
  const transports = new Map<string, AgentTransport>()
  // an agent no transport was registered for is called over A2A when AGENT_<NAME>_URL or
  // platform.a2a.remote-agents names where it is served
  const overA2a = remoteAgents(platform.config.get('platform.a2a.remote-agents'))
  const remote = (agent: string): AgentTransport | undefined => transports.get(agent) ?? overA2a(agent)
  const ai = platform.area(AI)
  const dispatcher = new Dispatcher({
    registry,
    interceptors,
    journal,
    bus: platform.bus,
    local: new LocalTransport(ai),
    remote,
    commitments: () => (platform.hasArea(COMMITMENTS) ? platform.area(COMMITMENTS) : undefined),
    breakers,
    logger: platform.logger
  })
  platform.extend(AI_AGENT_RUNS, coordinatorCalls(dispatcher, journal))
  const service: FleetService = {
    dispatcher,
    journal: store,
    journalSettled: () => journal.settled(),
    emitJournal: (coordinationId, parentEventId, type, fields) =>
      journal.emit(coordinationId, parentEventId, type, fields),
    coordinatorNames: () => registry.coordinators().map((c) => c.name),
    addInterceptor: (i) => interceptors.add(i),
    registerTransport: (agent, transport) => {
      transports.set(agent, transport)
      return () => {
        if (transports.get(agent) === transport) transports.delete(agent)
      }
    }
  }
  platform.provide(FLEET, service)
  platform.extend(ADMIN_FLEET_VIEW, adminFleetView({ registry, breakers, journal, store, remote }))
}
