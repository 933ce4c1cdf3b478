import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { CORE_CONFIG_KEYS, PATTERN_KEYS, PLUGIN_GRANT_SCHEMA } from './core-keys.js'
import type { KeyDef, KeyDefs } from './key-def.js'
import { closest, editDistance, didYouMean } from './did-you-mean.js'
import { PlatformError } from '../contracts/index.js'
import { CONFIG_ERRORS } from './errors.js'
import { GRANT_KEY, foldGrantKeys, isPlain, makeConfig, readYaml, type Config, type ConfigSources } from './load.js'

/** Who declares keys: the core, or an `Area` with its `configKeys`. */
export interface KeyOwner {
  readonly name: string
  readonly configKeys?: KeyDefs
}

/** PLATFORM_ADMIN_HTTP_WRITE_ENABLED -> platform.admin.http-write-enabled */
const envNameOf = (key: string) => key.toUpperCase().replace(/[.-]/g, '_')

/**
 * Every key a platform knows (the core's and its areas'), and what reads them: the loader
 * (defaults < platform.yaml < PLATFORM_* environment < overrides), the checks and their
 * did-you-mean, the environment names and the README table. The composition root builds one from
 * the core and its areas (`runtime/areas.ts`), so adding an area adds its keys without a core edit.
 */
export class ConfigKeySet {
  /** Every key by name, in declaration order (core first). */
  readonly keys: KeyDefs
  readonly patternKeys: KeyDefs = PATTERN_KEYS
  private readonly owners: ReadonlyMap<string, string>
  private readonly envToKey: ReadonlyMap<string, string>
  private validator: ValidateFunction | undefined

  /** The core's keys and each owner's; a key declared twice is refused, naming both owners. */
  constructor(owners: Iterable<KeyOwner>) {
    const keys: Record<string, KeyDef> = {}
    const ownerOf = new Map<string, string>()
    for (const { name, configKeys } of [{ name: 'core', configKeys: CORE_CONFIG_KEYS }, ...owners]) {
      for (const [k, def] of Object.entries(configKeys ?? {})) {
        const first = ownerOf.get(k)
        if (first !== undefined) throw new Error(`config key '${k}' is declared by both ${first} and ${name}`)
        if (GRANT_KEY.test(k)) throw new Error(`config key '${k}' (of ${name}) is a plugin's grant key`)
        ownerOf.set(k, name)
        keys[k] = def
      }
    }
    this.keys = keys
    this.owners = ownerOf
    this.envToKey = new Map(Object.keys(keys).map((k) => [envNameOf(k), k]))
  }

  /** The core or area that declares `key`. */
  ownerOf(key: string): string | undefined {
    return this.owners.get(key)
  }

  isKnown(key: string): boolean {
    return key in this.keys || GRANT_KEY.test(key)
  }

  /** The one ajv schema over the flat (dotted) configuration object. */
  jsonSchema(): Record<string, unknown> {
    const properties: Record<string, unknown> = {}
    for (const [k, d] of Object.entries(this.keys)) properties[k] = d.schema
    return {
      type: 'object',
      additionalProperties: false,
      properties,
      patternProperties: { [GRANT_KEY.source]: PLUGIN_GRANT_SCHEMA }
    }
  }

  defaults(): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    for (const [k, d] of Object.entries(this.keys)) if (d.default !== undefined) out[k] = structuredClone(d.default)
    return out
  }

  /** Validates a flat config object; throws CONFIG_INVALID naming the first offending key (never a secret's value). */
  check(flat: Record<string, unknown>, origin: Record<string, string> = {}): void {
    for (const k of Object.keys(flat)) {
      // `plugins: {dir: x}` lands on the grant pattern: a plugin named `dir` with a string grant
      if (GRANT_KEY.test(k) && !isPlain(flat[k])) {
        const name = k.slice('platform.plugins.'.length)
        const hint =
          editDistance(name, 'dirs') <= 2
            ? " (did you mean 'platform.plugins.dirs', the list of plugin directories?)"
            : ''
        throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
          detail: `config key '${k}'${hint} is read as the grant of a plugin named '${name}' and must be a map of enabled, sandbox, permissions, limits; got ${JSON.stringify(flat[k])}${origin[k] ? ` (from ${origin[k]})` : ''}`
        })
      }
      if (!this.isKnown(k))
        throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
          detail: `unknown config key '${k}'${origin[k] ? ` (from ${origin[k]})` : ''}${this.suggest(k)}`
        })
    }
    const validate = (this.validator ??= new Ajv2020({ allErrors: true, strict: false, verbose: true }).compile(
      this.jsonSchema()
    ))
    if (validate(flat)) return
    const err = validate.errors![0]!
    const path = err.instancePath
      .split('/')
      .slice(1)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    const key = path[0] ?? ''
    const inner = path.length > 1 ? ` at ${path.slice(1).join('.')}` : ''
    const from = origin[key] ? ` (from ${origin[key]})` : ''
    const got = !(key in flat)
      ? ''
      : this.keys[key]?.secret === true
        ? '; the value is not shown (a secret)'
        : `; got ${JSON.stringify(flat[key])}`
    throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
      detail: `config key '${key}'${inner} ${expectation(err)}${got}${from}`
    })
  }

  /** defaults < platform.yaml < PLATFORM_* environment < overrides (CLI flags). */
  load(sources: ConfigSources = {}): Config {
    const cwd = sources.cwd ?? process.cwd()
    let file = sources.file !== undefined ? resolve(cwd, sources.file) : undefined
    if (file === undefined && existsSync(resolve(cwd, 'platform.yaml'))) file = resolve(cwd, 'platform.yaml')
    if (file !== undefined && !existsSync(file))
      throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, { detail: `config file ${file} does not exist` })

    const origin: Record<string, string> = {}
    const fromFile = file !== undefined ? readYaml(file, (k) => this.isKnown(k)) : {}
    for (const k of Object.keys(fromFile)) origin[k] = file!
    const fromEnv = this.readEnv(sources.env ?? process.env)
    for (const k of Object.keys(fromEnv)) origin[k] = `environment ${envNameOf(k)}`
    const overrides = foldGrantKeys(sources.overrides ?? {})
    for (const k of Object.keys(overrides)) origin[k] = 'command line'

    const values = { ...this.defaults(), ...fromFile, ...fromEnv, ...overrides }
    this.check(values, origin)
    return makeConfig(values, file)
  }

  private readEnv(env: Record<string, string | undefined>): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(env)) {
      // ORG_PLATFORM_* are the `org.platform.*` init keys (camelCase segments upper-cased whole)
      if ((!name.startsWith('PLATFORM_') && !name.startsWith('ORG_PLATFORM_')) || value === undefined) continue
      const key = this.envToKey.get(name)
      if (key === undefined)
        throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, {
          detail: `unknown environment variable ${name}: it maps to no config key${this.suggest(name.toLowerCase().replace(/_/g, '.'))}`
        })
      out[key] = coerce(this.keys[key]!, value)
    }
    return out
  }

  // a key may mix `-` and `.` where the user typed the other: compare with both as `.`
  private suggest(key: string): string {
    const byForm = new Map(Object.keys(this.keys).map((k) => [k.replace(/-/g, '.'), k]))
    const near = closest(key.replace(/-/g, '.'), byForm.keys(), 4)
    return near === undefined ? '' : ` (did you mean '${byForm.get(near)}'?)`
  }
}

function coerce(def: KeyDef, raw: string): unknown {
  const type = (def.schema as { type?: string }).type
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
  // a refused key (`not: {}`) says in its description why it is refused and what to do instead
  const refused = (err.parentSchema as { description?: unknown } | undefined)?.description
  if (err.keyword === 'not' && typeof refused === 'string') return refused
  return err.message ?? 'is invalid'
}
