import { ConfigKeySet, type Config, type ConfigSources } from './config/index.js'
import { mergeErrors, type ErrorDefs } from './contracts/index.js'
import { CORE_ERRORS, type Area, type Platform } from './platform.js'
import { clusterArea } from './cluster/install.js'
import { transportArea } from './transport/install.js'
import { scopeArea } from './scope/install.js'
import { governanceArea } from './governance/install.js'
import { mcpArea, mcpExtrasArea } from './mcp/install.js'
import { aiArea } from './ai/install.js'
import { interactionsArea } from './interactions/install.js'
import { adminArea } from './admin/install.js'
import { webhooksArea } from './webhooks/install.js'
import { a2aArea } from './a2a/install.js'
import { fleetArea } from './fleet/install.js'
import { workflowsArea } from './workflows/install.js'
import { openAiArea } from './openai/install.js'

/**
 * Every area the served platform runs, in start-up order. Each declares the areas it needs;
 * `platform.use` refuses an order that breaks a declaration.
 */
export const AREAS: readonly Area[] = [
  // first: in cluster mode every later area finds the backplane in place
  clusterArea,
  transportArea,
  scopeArea,
  governanceArea,
  mcpArea,
  mcpExtrasArea,
  aiArea,
  adminArea,
  // after the admin (it lists the outbox there), before the areas that promise webhooks to clients
  webhooksArea,
  interactionsArea,
  a2aArea,
  fleetArea,
  workflowsArea,
  openAiArea
]

/** Installs `areas` in order (tests pass a subset). */
export async function installAreas(platform: Platform, areas: readonly Area[] = AREAS): Promise<void> {
  for (const area of areas) await platform.use(area)
}

/** Every configuration key of the served platform: the core's and those of each area in `AREAS`. */
export const CONFIG_KEYS = new ConfigKeySet(AREAS)

/**
 * Loads the configuration (defaults < platform.yaml < PLATFORM_* environment < overrides) against
 * the keys of the core and of `areas`. A test that installs a subset of areas still loads every key
 * of `AREAS`; a test area of its own passes `[...AREAS, itsArea]`.
 */
export function loadConfig(sources: ConfigSources = {}, areas: readonly Area[] = AREAS): Config {
  return (areas === AREAS ? CONFIG_KEYS : new ConfigKeySet(areas)).load(sources)
}

/**
 * The error catalogue of `areas` (every area by default): the core's codes and each area's, in
 * start-up order. The README table and the catalogue test read it; a code declared twice throws.
 */
export function errorCatalogue(areas: readonly Area[] = AREAS): ErrorDefs {
  return mergeErrors([
    ...CORE_ERRORS,
    ...areas.flatMap((a) => (a.errors === undefined ? [] : [{ owner: a.name, errors: a.errors }]))
  ])
}
