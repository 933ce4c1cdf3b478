import type { Area } from '../platform.js'

/**
 * The agent fleet: coordinators (agents that declare a fleet), the dispatcher that calls their
 * agents, the coordination journal, workflow runs. It hands the admin area its FleetView.
 */
export const fleetArea: Area = {
  name: 'fleet',
  dependsOn: ['plugins', 'governance', 'ai', 'admin'],
  install: () => {}
}
