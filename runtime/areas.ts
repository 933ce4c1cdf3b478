import type { Platform } from './platform.js'
import { installTransport } from './transport/index.js'
import { installPlugins } from './plugins/index.js'
import { installMcp } from './mcp/index.js'
import { installGovernance } from './governance/index.js'
import { installScope } from './scope/index.js'
import { installMcpExtras } from './mcp/extras.js'

/**
 * Every area the served platform runs, in start-up order. Each area's `install(platform)` adds its
 * routes, readiness checks and close hooks; tests may install a subset.
 */
export async function installAreas (platform: Platform): Promise<void> {
  await installTransport(platform)
  await installPlugins(platform)
  // scope before governance: YAML `type: scope` policies are built over its runtime
  await installScope(platform)
  // after plugins (their policy types), before traffic; MCP reads platform.toolCallGate per call
  await installGovernance(platform)
  await installMcp(platform)
  await installMcpExtras(platform)
}
