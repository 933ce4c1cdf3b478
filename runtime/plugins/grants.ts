import type { Config } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import { PLUGINS_ERRORS } from './errors.js'
import type { EffectiveGrant, Manifest, SandboxKind } from './contract.js'
import { DEFAULT_LIMITS } from './manifest.js'
import { grantCovers } from './net-allow.js'

/** What the operator wrote under `platform.plugins.<name>` (validated by the config schema). */
export interface OperatorGrant {
  enabled?: boolean
  sandbox?: SandboxKind
  permissions?: { net?: string[]; kv?: boolean; env?: string[] }
  limits?: Partial<Manifest['limits']>
}

/**
 * GRANT_REFUSED: the operator refused something the manifest asks for. The message holds a grant to
 * paste into platform.yaml; `params.grant` is that whole grant (what the operator granted plus what
 * is missing), `params.needed` the missing keys.
 */
export function grantRefused(
  plugin: string,
  needed: { key: string; value: unknown }[],
  reasons: string[],
  granted: OperatorGrant = {}
): PlatformError {
  const grant = withNeeded(granted, plugin, needed)
  const replacing = Object.keys(granted).length > 0 ? ` (it replaces the current platform.plugins.${plugin} grant)` : ''
  return new PlatformError(PLUGINS_ERRORS.GRANT_REFUSED, {
    plugin,
    needed,
    grant,
    detail: `plugin '${plugin}' asks for more than it is granted (${reasons.join('; ')}); grant it in platform.yaml${replacing}: ${grantLine(plugin, grant)}`
  })
}

/** One line of YAML that grants `grant` to `plugin`, valid at the root of platform.yaml. */
export function grantLine(plugin: string, grant: OperatorGrant): string {
  return `platform.plugins.${plugin}: ${flowYaml(grant)}`
}

/** Flow-style YAML; strings are JSON-quoted, which YAML reads as double-quoted scalars. */
function flowYaml(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(flowYaml).join(', ')}]`
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${k}: ${flowYaml(x)}`)
      .join(', ')}}`
  return JSON.stringify(v)
}

function withNeeded(granted: OperatorGrant, plugin: string, needed: { key: string; value: unknown }[]): OperatorGrant {
  const out = structuredClone(granted) as Record<string, unknown>
  const prefix = `platform.plugins.${plugin}.`
  for (const n of needed) {
    const path = n.key.slice(prefix.length).split('.')
    let at = out
    for (const seg of path.slice(0, -1)) at = (at[seg] ??= {}) as Record<string, unknown>
    at[path.at(-1)!] = n.value
  }
  return out as OperatorGrant
}

export function operatorGrant(config: Config, name: string): OperatorGrant {
  return (config.values[`platform.plugins.${name}`] as OperatorGrant | undefined) ?? {}
}

/** Least to most trusted: a grant of a tier also allows the tiers above it in isolation. */
const TRUST: Record<SandboxKind, number> = { isolate: 0, worker: 1, inline: 2 }

/**
 * Merges what the manifest asks with what the operator grants. Nothing is granted by default
 * beyond the isolate tier with log and clock. The plugin runs in the tier the operator names
 * (an operator may run an isolate plugin inline), but never in a less isolated tier than granted.
 * Limits: min(asked, granted), the default when not asked; asking above the grant (or above the
 * default with no grant) is refused.
 */
export function resolveGrant(
  name: string,
  manifest: Manifest,
  askedLimits: Partial<Manifest['limits']>,
  grant: OperatorGrant
): EffectiveGrant {
  const key = `platform.plugins.${name}`
  const needed: { key: string; value: unknown }[] = []
  const reasons: string[] = []

  const granted = grant.sandbox ?? 'isolate'
  if (TRUST[manifest.sandbox] > TRUST[granted]) {
    needed.push({ key: `${key}.sandbox`, value: manifest.sandbox })
    reasons.push(`sandbox '${manifest.sandbox}' but only '${granted}' is granted`)
  }

  const gNet = grant.permissions?.net ?? []
  const missingNet = manifest.permissions.net.filter((h) => !grantCovers(gNet, h))
  if (missingNet.length > 0) {
    needed.push({ key: `${key}.permissions.net`, value: [...gNet, ...missingNet] })
    reasons.push(`network access to ${missingNet.join(', ')}`)
  }
  if (manifest.permissions.kv && grant.permissions?.kv !== true) {
    needed.push({ key: `${key}.permissions.kv`, value: true })
    reasons.push('the key-value store')
  }
  const gEnv = grant.permissions?.env ?? []
  const missingEnv = manifest.permissions.env.filter((v) => !gEnv.includes(v))
  if (missingEnv.length > 0) {
    needed.push({ key: `${key}.permissions.env`, value: [...gEnv, ...missingEnv] })
    reasons.push(`environment variables ${missingEnv.join(', ')}`)
  }

  const limits = { ...DEFAULT_LIMITS }
  for (const k of Object.keys(DEFAULT_LIMITS) as (keyof Manifest['limits'])[]) {
    const ceiling = grant.limits?.[k] ?? DEFAULT_LIMITS[k]
    const asked = askedLimits[k]
    if (asked !== undefined && asked > ceiling) {
      needed.push({ key: `${key}.limits.${k}`, value: asked })
      reasons.push(`limits.${k} ${asked} above the granted ${ceiling}`)
    }
    limits[k] = Math.min(asked ?? DEFAULT_LIMITS[k], ceiling)
  }

  if (needed.length > 0) throw grantRefused(name, needed, reasons, grant)
  return {
    sandbox: grant.sandbox ?? manifest.sandbox,
    permissions: {
      net: [...manifest.permissions.net],
      kv: manifest.permissions.kv,
      env: [...manifest.permissions.env]
    },
    limits
  }
}
