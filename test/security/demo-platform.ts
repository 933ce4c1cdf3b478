/**
 * A whole platform with the repository's demo agent and fleet registered inline: the same plugin
 * code as in plugins/, without an isolate to load, so a loaded machine cannot time the load out.
 */
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { installAreas } from '../../runtime/areas.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import type { Manifest } from '../../runtime/plugins/index.js'
import type { Platform } from '../../runtime/platform.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { manifestOf } from '../mcp/helpers.js'

const PLUGINS = join(fileURLToPath(new URL('../../', import.meta.url)), 'plugins')

async function addInline(platform: Platform, folder: string): Promise<void> {
  const dir = join(PLUGINS, folder)
  const def = ((await import(pathToFileURL(join(dir, 'index.js')).href)) as { default: unknown }).default
  const manifest: Partial<Manifest> = { description: folder }
  // the host calls of an agent's own run() (ctx.fleet of the coordinator), as the loader grants them
  const agent = (op: string, args: unknown[]): Promise<unknown> => platform.plugins.agentTurns.call(folder, op, args)
  platform.plugins.set(dir, manifestOf(folder, manifest), inlineInstance(def, { log: platform.logger, agent }))
}

export const startDemoPlatform = (config: Record<string, unknown>): Promise<TestPlatform> =>
  startTestPlatform(config, {
    install: async (p) => {
      await installAreas(p)
      await addInline(p, 'demo-agent')
      await addInline(p, 'demo-fleet')
    }
  })
