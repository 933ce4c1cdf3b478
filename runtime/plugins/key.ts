import { AreaKey } from '../contracts/index.js'
import type { PluginHost } from './host.js'

/** The plugin host (loading, watching, grant reloads), provided by the plugins area's install. */
export const PLUGIN_HOST = new AreaKey<PluginHost>('plugins')
