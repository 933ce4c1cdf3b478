import { PlatformError } from '../contracts/index.js'
import type { SandboxFactory, SandboxKind } from './contract.js'
import { PLUGINS_ERRORS } from './errors.js'
import { loadInline } from './inline.js'
import { loadIsolate } from './isolate/index.js'

export type TierMap = Partial<Record<SandboxKind, SandboxFactory>>

/**
 * The worker tier, imported with the first worker plugin: piscina and the tier cost every platform
 * start about 0.1 s of CPU, and the bundled plugins and most deployments run none.
 */
export const loadWorker: SandboxFactory = async (spec) => (await import('./worker/index.js')).loadWorker(spec)

/**
 * The sandbox tiers this build can load plugins into, by grant `sandbox`. A tier missing from a
 * map (tests and tools may pass their own) fails the loads that need it, and only those, with
 * TIER_UNAVAILABLE.
 */
export const TIERS: TierMap = { inline: loadInline, isolate: loadIsolate, worker: loadWorker }

export function tierFactory(kind: SandboxKind, tiers: TierMap = TIERS): SandboxFactory {
  const f = tiers[kind]
  if (f === undefined) throw new PlatformError(PLUGINS_ERRORS.TIER_UNAVAILABLE, { tier: kind })
  return f
}
