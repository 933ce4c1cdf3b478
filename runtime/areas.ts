import type { Area, Platform } from './platform.js'
import { transportArea } from './transport/install.js'
import { scopeArea } from './scope/install.js'
import { governanceArea } from './governance/install.js'
import { mcpArea, mcpExtrasArea } from './mcp/install.js'
import { aiArea } from './ai/install.js'
import { interactionsArea } from './interactions/install.js'
import { adminArea } from './admin/install.js'
import { a2aArea } from './a2a/install.js'
import { fleetArea } from './fleet/install.js'

/**
 * Every area the served platform runs, in start-up order. Each declares the areas it needs;
 * `platform.use` refuses an order that breaks a declaration.
 */
export const AREAS: readonly Area[] = [
  transportArea,
  scopeArea,
  governanceArea,
  mcpArea,
  mcpExtrasArea,
  aiArea,
  interactionsArea,
  adminArea,
  a2aArea,
  fleetArea
]

/** Installs `areas` in order (tests pass a subset). */
export async function installAreas(platform: Platform, areas: readonly Area[] = AREAS): Promise<void> {
  for (const area of areas) await platform.use(area)
}
