import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { loadConfig } from '../../runtime/areas.js'
import { startPlatform, type Platform, type PlatformOptions } from '../../runtime/platform.js'

export interface TestPlatform {
  platform: Platform
  url: string
  port: number
  dataDir: string
  /** Log lines the platform wrote (parsed JSON). */
  logs: Record<string, unknown>[]
  close: () => Promise<void>
}

/**
 * Starts a real platform on 127.0.0.1, port 0, with a fresh data directory and no environment
 * leaking in. `t.teardown(tp.close)` stops it and removes the data.
 */
export async function startTestPlatform(
  overrides: Record<string, unknown> = {},
  opts: Partial<PlatformOptions> = {}
): Promise<TestPlatform> {
  const dataDir =
    (overrides['platform.data-dir'] as string | undefined) ?? mkdtempSync(join(tmpdir(), 'platform-test-'))
  const logs: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n'))
        if (line.trim() !== '') {
          try {
            logs.push(JSON.parse(line))
          } catch {
            /* not JSON */
          }
        }
      cb()
    }
  })
  const config = loadConfig({
    env: {},
    cwd: dataDir,
    overrides: {
      'platform.server.port': 0,
      'platform.server.host': '127.0.0.1',
      'platform.data-dir': dataDir,
      'platform.plugins.dirs': [],
      'platform.log-level': 'warn',
      ...overrides
    }
  })
  const { platform, port, url } = await startPlatform({ config, logDestination: sink, ...opts })
  return {
    platform,
    url,
    port,
    dataDir,
    logs,
    close: async () => {
      await platform.close()
      if (overrides['platform.data-dir'] === undefined) rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
