/**
 * What the admin routes and MCP tools read of the fleet, from live state: the coordinators the
 * plugins declare, their agents' availability and circuits, and the journal.
 */
import { EMPTY_FLEET, type FleetView, type JournalEvent } from '../admin/index.js'
import type { CircuitBreakers } from './circuit-breakers.js'
import type { Coordinator, FleetRegistry } from './fleet-registry.js'
import type { AgentTransport, JournalStore } from './fleet-types.js'
import type { JournalWriter } from './journal-writer.js'

export interface FleetViewDeps {
  registry: FleetRegistry
  breakers: CircuitBreakers
  journal: JournalWriter
  store: JournalStore
  remote: (agent: string) => AgentTransport | undefined
}

export function adminFleetView(d: FleetViewDeps): FleetView {
  const isLocal = (agent: string): boolean => d.registry.agent(agent) !== undefined
  // reachable now: hosted here or over a registered transport, and its circuit not open
  const available = (c: Coordinator, agent: string): boolean =>
    c.unavailable === undefined &&
    (isLocal(agent) || d.remote(agent) !== undefined) &&
    d.breakers.state(c.name, agent) !== 'OPEN'
  return {
    ...EMPTY_FLEET,
    coordinators: () =>
      d.registry.coordinators().map((c) => ({
        name: c.name,
        agentCount: c.refs.length,
        availableCount: c.refs.filter((r) => available(c, r.name)).length
      })),
    coordinatorHealth: (name) => {
      const c = d.registry.coordinator(name)
      if (c === undefined) return undefined
      return {
        coordinator: c.name,
        timestamp: new Date().toISOString(),
        ...(c.unavailable !== undefined ? { available: false, error: c.unavailable } : { available: true }),
        agents: c.refs.map((r) => ({
          name: r.name,
          available: available(c, r.name),
          circuitState: d.breakers.state(c.name, r.name),
          recentFailures: d.breakers.recentFailures(c.name, r.name)
        }))
      }
    },
    coordinatorFleet: (name) => {
      const c = d.registry.coordinator(name)
      if (c === undefined) return undefined
      return {
        name: c.name,
        agents: c.refs.map((r) => ({
          name: r.name,
          version: r.version !== '' ? r.version : (d.registry.agent(r.name)?.version ?? ''),
          isAvailable: available(c, r.name),
          isLocal: isLocal(r.name),
          weight: r.weight,
          required: r.required
        }))
      }
    },
    journal: async (q) => {
      // a reader sees the dispatches made before it asked
      await d.journal.settled()
      return (await d.store.query(q)) as JournalEvent[]
    },
    coordination: async (id) => {
      await d.journal.settled()
      const events = await d.store.coordination(id)
      return events.length === 0 ? undefined : (events as JournalEvent[])
    },
    get coordinatorCount() {
      return d.registry.coordinators().length
    }
  }
}
