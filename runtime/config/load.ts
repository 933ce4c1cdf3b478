import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseDocument } from 'yaml'
import { Ajv2020 } from 'ajv/dist/2020.js'
import {
  KEYS,
  configSchema,
  defaults,
  type ConfigKey,
  type ConfigKeys,
  type PluginGrantConfig,
  type PluginGrantKey
} from './schema.js'
import { closest, editDistance, didYouMean } from './did-you-mean.js'
import { OperatorError } from './operator-error.js'
import { readRegularFile } from './regular-file.js'

/** A configuration file is kilobytes; a larger one (or `/dev/zero`) is a mistake, not a config. */
const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024

/** Start-up stops with this error; its message names the key and what it expects. */
export class ConfigError extends OperatorError {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

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

const PATTERN = /^platform\.plugins\.(?!dirs$)[A-Za-z0-9_-]+$/
const isKnown = (k: string) => k in KEYS || PATTERN.test(k)
const isPlain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

const ajv = new Ajv2020({ allErrors: true, strict: false, verbose: true })
const validate = ajv.compile(configSchema())

/**
 * Nested and dotted keys may be mixed in YAML:
 * `platform: {admin: {enabled: true}}` or `platform.admin.enabled: true`.
 */
export function flatten(
  obj: Record<string, unknown>,
  prefix = '',
  out: Record<string, unknown> = {}
): Record<string, unknown> {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix === '' ? k : `${prefix}.${k}`
    if (isKnown(key) || !isPlain(v)) {
      if (key in out) throw new ConfigError(`config key '${key}' is given twice`)
      out[key] = v
    } else {
      flatten(v, key, out)
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
        throw new ConfigError(`config key '${k}' is given twice (as a map and as dotted keys)`)
      out[k] = isPlain(v) && k.startsWith('platform.plugins.') ? structuredClone(v) : v
      continue
    }
    const grantKey = `platform.plugins.${m[1]!}`
    const grant = out[grantKey] ?? (out[grantKey] = {})
    if (!isPlain(grant)) throw new ConfigError(`config key '${k}' sets part of '${grantKey}', which is not a map`)
    const path = m[2]!.split('.')
    let at = grant
    for (const seg of path.slice(0, -1)) {
      const next = at[seg] ?? (at[seg] = {})
      if (!isPlain(next))
        throw new ConfigError(`config key '${k}' sets part of '${grantKey}.${seg}', which is not a map`)
      at = next
    }
    const last = path.at(-1)!
    if (last in at) throw new ConfigError(`config key '${k}' is given twice`)
    at[last] = v
  }
  return out
}

function readYaml(path: string): Record<string, unknown> {
  let text: string
  try {
    text = readRegularFile(path, MAX_CONFIG_FILE_BYTES).toString('utf8')
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as Error).message}`)
  }
  const doc = parseDocument(text, { uniqueKeys: true, customTags: [] })
  // unresolved tags (`!!js/function`) are only warnings in the yaml package: refuse them too
  const problem = doc.errors[0] ?? doc.warnings[0]
  if (problem !== undefined) throw new ConfigError(`config file ${path}: ${problem.message}`)
  const data = doc.toJS() as unknown
  if (data == null) return {}
  if (!isPlain(data)) throw new ConfigError(`config file ${path} must hold a mapping of keys`)
  return foldGrantKeys(flatten(data))
}

/** PLATFORM_ADMIN_HTTP_WRITE_ENABLED -> platform.admin.http-write-enabled */
const envNameOf = (key: string) => key.toUpperCase().replace(/[.-]/g, '_')
const ENV_TO_KEY = new Map(Object.keys(KEYS).map((k) => [envNameOf(k), k]))

function coerce(key: string, raw: string): unknown {
  const type = (KEYS[key]!.schema as { type?: string }).type
  const t = raw.trim()
  if (type === 'boolean') return t === 'true' ? true : t === 'false' ? false : raw
  if (type === 'integer' || type === 'number') return t !== '' && Number.isFinite(Number(t)) ? Number(t) : raw
  if (type === 'array') {
    if (t.startsWith('[')) {
      try {
        return JSON.parse(t)
      } catch {
        return raw
      }
    }
    return t === '' ? [] : t.split(',').map((s) => s.trim())
  }
  if (type === 'object') {
    try {
      return JSON.parse(t)
    } catch {
      return raw
    }
  }
  return raw
}

function readEnv(env: Record<string, string | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(env)) {
    // ORG_PLATFORM_* are the `org.platform.*` init keys (camelCase segments upper-cased whole)
    if ((!name.startsWith('PLATFORM_') && !name.startsWith('ORG_PLATFORM_')) || value === undefined) continue
    const key = ENV_TO_KEY.get(name)
    if (key === undefined)
      throw new ConfigError(
        `unknown environment variable ${name}: it maps to no config key${suggest(name.toLowerCase().replace(/_/g, '.'))}`
      )
    out[key] = coerce(key, value)
  }
  return out
}

// a key may mix `-` and `.` where the user typed the other: compare with both as `.`
function suggest(key: string): string {
  const byForm = new Map(Object.keys(KEYS).map((k) => [k.replace(/-/g, '.'), k]))
  const near = closest(key.replace(/-/g, '.'), byForm.keys(), 4)
  return near === undefined ? '' : ` (did you mean '${byForm.get(near)}'?)`
}

function expectation(err: {
  keyword: string
  message?: string
  params: Record<string, unknown>
  parentSchema?: unknown
}): string {
  if (err.keyword === 'enum')
    return `must be one of ${(err.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
  if (err.keyword === 'additionalProperties') {
    // name the stray key and the close known one: "must NOT have additional properties" names neither
    const allowed = Object.keys(
      (err.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {}
    )
    const k = String(err.params.additionalProperty)
    return `has unknown key '${k}'${didYouMean(k, allowed)}; allowed: ${allowed.join(', ')}`
  }
  return err.message ?? 'is invalid'
}

/** Validates a flat config object; throws ConfigError naming the first offending key. */
export function check(flat: Record<string, unknown>, origin: Record<string, string> = {}): void {
  for (const k of Object.keys(flat)) {
    // `plugins: {dir: x}` lands on the grant pattern: a plugin named `dir` with a string grant
    if (PATTERN.test(k) && !isPlain(flat[k])) {
      const name = k.slice('platform.plugins.'.length)
      const hint =
        editDistance(name, 'dirs') <= 2
          ? " (did you mean 'platform.plugins.dirs', the list of plugin directories?)"
          : ''
      throw new ConfigError(
        `config key '${k}'${hint} is read as the grant of a plugin named '${name}' and must be a map of enabled, sandbox, permissions, limits; got ${JSON.stringify(flat[k])}${origin[k] ? ` (from ${origin[k]})` : ''}`
      )
    }
    if (!isKnown(k))
      throw new ConfigError(`unknown config key '${k}'${origin[k] ? ` (from ${origin[k]})` : ''}${suggest(k)}`)
  }
  if (validate(flat)) return
  const err = validate.errors![0]!
  const path = err.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  const key = path[0] ?? ''
  const inner = path.length > 1 ? ` at ${path.slice(1).join('.')}` : ''
  const from = origin[key] ? ` (from ${origin[key]})` : ''
  const got = key in flat ? `; got ${JSON.stringify(flat[key])}` : ''
  throw new ConfigError(`config key '${key}'${inner} ${expectation(err)}${got}${from}`)
}

/** defaults < platform.yaml < PLATFORM_* environment < overrides (CLI flags). */
export function loadConfig(sources: ConfigSources = {}): Config {
  const cwd = sources.cwd ?? process.cwd()
  let file = sources.file !== undefined ? resolve(cwd, sources.file) : undefined
  if (file === undefined && existsSync(resolve(cwd, 'platform.yaml'))) file = resolve(cwd, 'platform.yaml')
  if (file !== undefined && !existsSync(file)) throw new ConfigError(`config file ${file} does not exist`)

  const origin: Record<string, string> = {}
  const fromFile = file !== undefined ? readYaml(file) : {}
  for (const k of Object.keys(fromFile)) origin[k] = file!
  const fromEnv = readEnv(sources.env ?? process.env)
  for (const k of Object.keys(fromEnv)) origin[k] = `environment ${envNameOf(k)}`
  const overrides = foldGrantKeys(sources.overrides ?? {})
  for (const k of Object.keys(overrides)) origin[k] = 'command line'

  const values = { ...defaults(), ...fromFile, ...fromEnv, ...overrides }
  check(values, origin)
  return makeConfig(values, file)
}

export function makeConfig(values: Record<string, unknown>, file?: string): Config {
  const frozen = Object.freeze({ ...values })
  return {
    values: frozen,
    file,
    get: (key: string) => frozen[key] as never
  }
}
