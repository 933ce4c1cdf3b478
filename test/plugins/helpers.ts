import type { Test } from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { pluginCallFailure, type PluginHost, type SandboxInstance } from '../../runtime/plugins/index.js'

export interface PluginFiles {
  manifest?: Record<string, unknown> | string
  index?: string
  files?: Record<string, string>
}

/** Writes a plugin folder `<root>/<folder>` (plugin.json, index.js, extra files). */
export function writePlugin(root: string, folder: string, p: PluginFiles = {}): string {
  const dir = join(root, folder)
  mkdirSync(dir, { recursive: true })
  const manifest = p.manifest ?? { name: folder, version: '1.0.0' }
  for (const [f, text] of Object.entries(p.files ?? {})) {
    mkdirSync(join(dir, f, '..'), { recursive: true })
    writeFileSync(join(dir, f), text)
  }
  if (p.index !== undefined) writeFileSync(join(dir, 'index.js'), p.index)
  // the manifest last, as a copy into the folder would usually finish with it
  writeFileSync(join(dir, 'plugin.json'), typeof manifest === 'string' ? manifest : JSON.stringify(manifest))
  return dir
}

/** A plugin entry with one tool `name` returning `value` (after `delayMs`). */
export function toolPlugin(name: string, value: unknown, delayMs = 0): string {
  return `import { definePlugin, tool } from 'uws-agent-platform/sdk'
export default definePlugin({ tools: [tool({ name: ${JSON.stringify(name)}, run: async (args) => {
  ${delayMs > 0 ? `await new Promise((r) => setTimeout(r, ${delayMs}))` : ''}
  return { value: ${JSON.stringify(value)}, args }
} })] })
`
}

export function tempRoot(prefix = 'plugins-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** Grants the inline tier to each named plugin (the tier every environment has). */
export function inlineGrants(...names: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const n of names) out[`platform.plugins.${n}`] = { sandbox: 'inline' }
  return out
}

export interface HostedPlatform extends TestPlatform {
  host: PluginHost
  root: string
}

/** A test platform with the plugin host on `root` (fast rescans so tests stay short). */
export async function startWithPlugins(
  root: string,
  overrides: Record<string, unknown> = {},
  hostOpts: { loadTimeoutMs?: number } = {}
): Promise<HostedPlatform> {
  const tp = await startTestPlatform(
    { 'platform.plugins.dirs': [root], ...overrides },
    { pluginHost: { rescanMs: 250, debounceMs: 50, ...hostOpts } }
  )
  return {
    ...tp,
    host: tp.platform.pluginHost,
    root,
    close: async () => {
      await tp.close()
      rmSync(root, { recursive: true, force: true })
    }
  }
}

/** Polls until `check` returns a truthy value (the deadline only stops a hung test). */
export async function waitFor<T>(check: () => T | undefined | false, what: string, deadlineMs = 10_000): Promise<T> {
  const end = Date.now() + deadlineMs
  for (;;) {
    const v = check()
    if (v !== undefined && v !== false) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

export function statusOf(tp: TestPlatform, name: string) {
  return tp.platform.plugins.status().find((s) => s.name === name)
}

/** One tool call on a sandbox instance of any tier. */
export const tool = (inst: SandboxInstance, name: string, args: unknown = {}, opts = {}): Promise<unknown> =>
  inst.invoke({ kind: 'tool', name, args }, opts)

/** The call fails with PLUGIN_CALL_FAILED of `reason` whose message matches `re`. */
export async function rejects(t: Test, p: Promise<unknown>, reason: string, re: RegExp): Promise<void> {
  try {
    await p
    t.fail('expected a failure')
  } catch (err) {
    t.equal(pluginCallFailure(err)?.reason, reason, 'PLUGIN_CALL_FAILED of that reason')
    t.match((err as Error).message, re)
  }
}
