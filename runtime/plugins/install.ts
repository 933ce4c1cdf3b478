import type { Platform } from '../platform.js'
import { PluginHost } from './host.js'
import type { KvDatabase } from './capabilities.js'

const hosts = new WeakMap<Platform, PluginHost>()

/** The plugin host of a platform, if the plugin area is installed (the CLI reloads grants through it). */
export function pluginHostOf (platform: Platform): PluginHost | undefined { return hosts.get(platform) }

/**
 * The plugin area: loads every plugin before the server listens (readiness check `plugins`),
 * then watches the plugin directories; disposes every sandbox on close.
 */
export async function installPlugins (platform: Platform, opts: { rescanMs?: number, debounceMs?: number, loadTimeoutMs?: number } = {}): Promise<PluginHost> {
  const host = new PluginHost({
    config: platform.config,
    logger: platform.logger.child({ area: 'plugins' }),
    registry: platform.plugins,
    capabilities: { logger: platform.logger, kvDb: () => platform.store.db<unknown, [string, string]>('plugin-kv') as KvDatabase },
    metrics: platform.metrics,
    ...opts
  })
  hosts.set(platform, host)
  platform.addReadiness('plugins', () => host.ready)
  platform.onClose(() => host.close())
  await host.start()
  return host
}
