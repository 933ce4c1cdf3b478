/**
 * The platform in the bench's own process, for the scripts that time its internals: on a free
 * loopback port, with no plugins unless given, and its log discarded (only errors are produced).
 */
import { Writable } from 'node:stream'
import { startPlatform, type Platform } from '../../runtime/platform.js'
import { installAreas, loadConfig } from '../../runtime/areas.js'

export function startInProcess(
  dataDir: string,
  overrides: Record<string, unknown> = {},
  install: (p: Platform) => Promise<void> | void = installAreas
): Promise<{ platform: Platform; port: number; url: string }> {
  const config = loadConfig({
    env: {},
    cwd: dataDir,
    overrides: {
      'platform.server.port': 0,
      'platform.server.host': '127.0.0.1',
      'platform.data-dir': dataDir,
      'platform.plugins.dirs': [],
      'platform.log-level': 'error',
      ...overrides
    }
  })
  return startPlatform({
    config,
    logDestination: new Writable({
      write(_c, _e, cb) {
        cb()
      }
    }),
    install
  })
}
