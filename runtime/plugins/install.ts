import type { Area, Platform } from '../platform.js'
import { PluginHost } from './host.js'
import type { KvDatabase } from './capabilities.js'
import { PLUGIN_HOST } from './key.js'

/**
 * The plugin area: loads every plugin before the server listens (readiness check `plugins`),
 * then watches the plugin directories; disposes every sandbox on close.
 */
export async function installPlugins(
  platform: Platform,
  opts: { rescanMs?: number; debounceMs?: number; loadTimeoutMs?: number } = {}
): Promise<PluginHost> {
  const host = new PluginHost({
    config: platform.config,
    logger: platform.logger.child({ area: 'plugins' }),
    registry: platform.plugins,
    capabilities: {
      logger: platform.logger,
      kvDb: () => platform.store.db<unknown, [string, string]>('plugin-kv') as KvDatabase,
      agentTurns: platform.plugins.agentTurns,
      runtimeStreams: platform.plugins.runtimeStreams
    },
    metrics: platform.metrics,
    ...opts
  })
  platform.provide(PLUGIN_HOST, host)
  platform.addReadiness('plugins', () => host.ready)
  platform.onClose(() => host.close())
  await host.start()
  return host
}

/** The plugin host over the registry the platform holds (the registry itself is core). */
export const pluginsArea: Area = {
  name: 'plugins',
  dependsOn: [],
  install: async (p) => {
    await installPlugins(p)
  }
}
