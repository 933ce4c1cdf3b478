import { basename } from 'node:path'
import type { Config } from '../config/index.js'
import type { Metrics } from '../observability/index.js'
import type { Manifest, SandboxInstance, EffectiveGrant } from './contract.js'
import { isPlatformError } from '../contracts/index.js'
import { readManifest } from './manifest.js'
import { operatorGrant, resolveGrant } from './grants.js'
import { buildCapabilities, type CapabilityDeps } from './capabilities.js'
import { tierFactory, type TierMap } from './tiers.js'
import { guardInline } from './inline-guard.js'

export const LOAD_TIMEOUT_MS = 15_000

export type LoadOutcome =
  | { state: 'live'; name: string; manifest: Manifest; grant: EffectiveGrant; instance: SandboxInstance }
  | { state: 'failed'; name: string; manifest?: Manifest; error: string }
  | { state: 'disabled'; name: string; manifest: Manifest }

export interface LoaderDeps {
  config: Config
  capabilities: CapabilityDeps
  tiers: TierMap
  loadTimeoutMs?: number
  /** Where sandbox deaths are counted (`platform_plugin_failures_total`). */
  metrics?: Metrics
}

function errorText(e: unknown): string {
  // the host's own codes (a bad manifest, a refused grant, a missing tier) read as plain sentences
  if (isPlatformError(e)) return e.message
  if (e instanceof Error) return e.name === 'Error' ? e.message : `${e.name}: ${e.message}`
  try {
    return `threw ${String(e)}`
  } catch {
    return 'threw a value that cannot be shown'
  }
}

/**
 * Loads one plugin folder: manifest, operator grant, capabilities, sandbox tier. Never throws: a
 * failure at any step becomes a `failed` outcome carrying the reason.
 */
export async function loadPluginDir(dir: string, deps: LoaderDeps): Promise<LoadOutcome> {
  let parsed
  try {
    parsed = readManifest(dir)
  } catch (e) {
    return { state: 'failed', name: basename(dir), error: errorText(e) }
  }
  const { manifest, askedLimits, entryPath } = parsed
  const name = manifest.name
  const op = operatorGrant(deps.config, name)
  if (op.enabled === false) return { state: 'disabled', name, manifest }
  let grant: EffectiveGrant
  let instance: SandboxInstance
  try {
    grant = resolveGrant(name, manifest, askedLimits, op)
    const factory = tierFactory(grant.sandbox, deps.tiers)
    const capabilities = buildCapabilities(deps.capabilities, name, grant)
    const isolatePool = {
      processes: deps.config.get('platform.sandbox.isolate.processes'),
      pluginsPerProcess: deps.config.get('platform.sandbox.isolate.plugins-per-process')
    }
    instance = await withTimeout(
      factory({
        dir,
        entry: entryPath,
        manifest,
        grant,
        capabilities,
        isolatePool,
        spinUs: deps.config.get('platform.sandbox.spin-us'),
        ...(deps.metrics !== undefined ? { metrics: deps.metrics } : {})
      }),
      deps.loadTimeoutMs ?? LOAD_TIMEOUT_MS
    )
  } catch (e) {
    const text = errorText(e)
    return {
      state: 'failed',
      name,
      manifest,
      error: text.startsWith('plugin ') || text.startsWith('the ') ? text : `${manifest.entry}: ${text}`
    }
  }
  if (grant.sandbox === 'inline') instance = guardInline(instance, name, grant.limits)
  return { state: 'live', name, manifest, grant, instance }
}

async function withTimeout(p: Promise<SandboxInstance>, ms: number): Promise<SandboxInstance> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`took longer than ${ms} ms to load`))
    }, ms)
  })
  try {
    return await Promise.race([p, late])
  } catch (e) {
    // a load that finishes after we gave up must not leak its sandbox
    p.then(
      (i) => i.dispose(),
      () => {}
    ).catch(() => {})
    throw e
  } finally {
    clearTimeout(timer)
  }
}
