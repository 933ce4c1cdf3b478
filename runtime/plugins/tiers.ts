import type { SandboxFactory, SandboxKind } from './contract.js'
import { loadInline } from './inline.js'
import { loadIsolate } from './isolate/index.js'
import { loadWorker } from './worker/index.js'

export type TierMap = Partial<Record<SandboxKind, SandboxFactory>>

/**
 * The sandbox tiers this build can load plugins into, by grant `sandbox`. A tier missing from a
 * map (tests and tools may pass their own) fails the loads that need it, and only those, with
 * TierUnavailable.
 */
export const TIERS: TierMap = { inline: loadInline, isolate: loadIsolate, worker: loadWorker }

export class TierUnavailable extends Error {
  constructor(readonly tier: SandboxKind) {
    super(`the '${tier}' sandbox tier is not available in this build of the platform`)
    this.name = 'TierUnavailable'
  }
}

export function tierFactory(kind: SandboxKind, tiers: TierMap = TIERS): SandboxFactory {
  const f = tiers[kind]
  if (f === undefined) throw new TierUnavailable(kind)
  return f
}
