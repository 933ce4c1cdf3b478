import { LineCounter, parseDocument } from 'yaml'
import type { ConfigKey, ConfigKeys, PluginGrantConfig, PluginGrantKey } from './core-keys.js'
import { PlatformError } from '../contracts/index.js'
import { CONFIG_ERRORS } from './errors.js'
import { readRegularFile } from './regular-file.js'

/** A configuration file is kilobytes; a larger one (or `/dev/zero`) is a mistake, not a config. */
const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024

export interface ConfigSources {
  /** Path of a YAML file; when absent, `./platform.yaml` is read if it exists. */
  file?: string | undefined
  /** Environment to read `PLATFORM_*` variables from (default `process.env`). */
  env?: Record<string, string | undefined>
  /** Highest precedence: CLI flags or programmatic overrides, already as dotted keys. */
  overrides?: Record<string, unknown>
  /** Base directory for resolving a default `platform.yaml` (default cwd). */
  cwd?: string
}

export interface Config {
  /** The effective value of a key, typed by the key. */
  get<K extends ConfigKey>(key: K): ConfigKeys[K]
  /** What the operator grants one plugin, if anything. */
  get(key: PluginGrantKey): PluginGrantConfig | undefined
  /** Every key with its effective value. */
  readonly values: Readonly<Record<string, unknown>>
  /** Where the file came from, if any. */
  readonly file: string | undefined
}

/** A plugin's grant: `platform.plugins.<name>`, any name but `dirs`. */
export const GRANT_KEY = /^platform\.plugins\.(?!dirs$)[A-Za-z0-9_-]+$/
export const isPlain = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * Nested and dotted keys may be mixed in YAML:
 * `platform: {admin: {enabled: true}}` or `platform.admin.enabled: true`.
 */
export function flatten(
  obj: Record<string, unknown>,
  isKnown: (key: string) => boolean,
  prefix = '',
  out: Record<string, unknown> = {}
): Record<string, unknown> {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix === '' ? k : `${prefix}.${k}`
    if (isKnown(key) || !isPlain(v)) {
      if (key in out)
        throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, { detail: `config key '${key}' is given twice` })
      out[key] = v
    } else {
      flatten(v, isKnown, key, out)
    }
  }
  return out
}

const GRANT_PART = /^platform\.plugins\.((?!dirs\.)[A-Za-z0-9_-]+)\.(.+)$/

/**
 * `platform.plugins.<name>.<key...>: value` (dotted below the plugin name) joins the grant map of
 * `platform.plugins.<name>`, so each line a refusal message or the docs show can be pasted alone.
 */
export function foldGrantKeys(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(flat)) {
    const m = GRANT_PART.exec(k)
    if (m === null) {
      if (k in out && isPlain(out[k]) && isPlain(v))
        throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
          detail: `config key '${k}' is given twice (as a map and as dotted keys)`
        })
      out[k] = isPlain(v) && k.startsWith('platform.plugins.') ? structuredClone(v) : v
      continue
    }
    const grantKey = `platform.plugins.${m[1]!}`
    const grant = out[grantKey] ?? (out[grantKey] = {})
    if (!isPlain(grant))
      throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
        detail: `config key '${k}' sets part of '${grantKey}', which is not a map`
      })
    const path = m[2]!.split('.')
    let at = grant
    for (const seg of path.slice(0, -1)) {
      const next = at[seg] ?? (at[seg] = {})
      if (!isPlain(next))
        throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
          detail: `config key '${k}' sets part of '${grantKey}.${seg}', which is not a map`
        })
      at = next
    }
    const last = path.at(-1)!
    if (last in at)
      throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, { detail: `config key '${k}' is given twice` })
    at[last] = v
  }
  return out
}

/** The mapping a YAML config file holds, flat (dotted keys), grants folded. */
export function readYaml(path: string, isKnown: (key: string) => boolean): Record<string, unknown> {
  let text: string
  try {
    text = readRegularFile(path, MAX_CONFIG_FILE_BYTES).toString('utf8')
  } catch (e) {
    throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
      detail: `cannot read config file ${path}: ${(e as Error).message}`
    })
  }
  const lines = new LineCounter()
  const doc = parseDocument(text, { uniqueKeys: true, customTags: [], prettyErrors: false, lineCounter: lines })
  // unresolved tags (`!!js/function`) are only warnings in the yaml package: refuse them too
  const problem = doc.errors[0] ?? doc.warnings[0]
  if (problem !== undefined) {
    // where, not the excerpt yaml would print: the line may hold a secret (a token, a password)
    const { line, col } = lines.linePos(problem.pos[0])
    throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
      detail: `config file ${path}: ${problem.message} at line ${line}, column ${col}`
    })
  }
  const data = doc.toJS() as unknown
  if (data == null) return {}
  if (!isPlain(data))
    throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, { detail: `config file ${path} must hold a mapping of keys` })
  return foldGrantKeys(flatten(data, isKnown))
}

export function makeConfig(values: Record<string, unknown>, file?: string): Config {
  const frozen = Object.freeze({ ...values })
  return {
    values: frozen,
    file,
    get: (key: string) => frozen[key] as never
  }
}
