import { statSync } from 'node:fs'
import { join, resolve, relative, isAbsolute, sep } from 'node:path'
import type { ErrorObject } from 'ajv/dist/2020.js'
import { compileOnUse } from '../config/index.js'
import { readRegularFile } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import { PLUGINS_ERRORS } from './errors.js'
import type { Manifest, SandboxKind } from './contract.js'

export const MANIFEST_FILE = 'plugin.json'
export const DEFAULT_SANDBOX: SandboxKind = 'isolate'
export const DEFAULT_LIMITS: Manifest['limits'] = Object.freeze({ memoryMb: 64, timeoutMs: 5000, concurrency: 4 })
export const NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$'
/** `host`, `host:port`, `*.domain`, `[v6]:port`; a host without a port allows any port. */
export const HOST_PATTERN =
  '^(?:(?:\\*\\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?$'
const MAX_MANIFEST_BYTES = 65_536
const ENV_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$'

const LIMITS = {
  memoryMb: { type: 'integer', minimum: 8, maximum: 4096 },
  timeoutMs: { type: 'integer', minimum: 1, maximum: 3_600_000 },
  concurrency: { type: 'integer', minimum: 1, maximum: 1024 }
}

/** The plugin.json schema (also published in docs/plugins.md). */
export const MANIFEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'version'],
  properties: {
    $schema: { type: 'string' },
    name: { type: 'string', pattern: NAME_PATTERN },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+(?:[-+][0-9A-Za-z.+-]+)?$' },
    description: { type: 'string', maxLength: 1000 },
    entry: { type: 'string', minLength: 1 },
    sandbox: { enum: ['isolate', 'worker', 'inline'] },
    permissions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        net: { type: 'array', uniqueItems: true, items: { type: 'string', pattern: HOST_PATTERN } },
        kv: { type: 'boolean' },
        env: { type: 'array', uniqueItems: true, items: { type: 'string', pattern: ENV_PATTERN } }
      }
    },
    limits: { type: 'object', additionalProperties: false, properties: LIMITS }
  }
}

const PATTERN_TEXT: Record<string, string> = {
  [NAME_PATTERN]: 'must be 1-64 of a-z 0-9 _ - starting with a letter or digit',
  [HOST_PATTERN]: "must be a host name ('api.example.com', '*.example.com', 'host:port')",
  [ENV_PATTERN]: 'must be an environment variable name (A-Z a-z 0-9 _)',
  '^\\d+\\.\\d+\\.\\d+(?:[-+][0-9A-Za-z.+-]+)?$': "must be a semantic version like '1.0.0'"
}

export interface ParsedManifest {
  /** With defaults filled in. */
  manifest: Manifest
  /** The limits the manifest itself states (a missing one takes the default, capped by the grant). */
  askedLimits: Partial<Manifest['limits']>
}

const validator = compileOnUse(MANIFEST_SCHEMA, { allErrors: true, strict: false })

function field(path: string): string {
  return path
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.')
}

function describe(e: ErrorObject): string {
  const at = field(e.instancePath)
  switch (e.keyword) {
    case 'required': {
      const f = at === '' ? String(e.params.missingProperty) : `${at}.${String(e.params.missingProperty)}`
      return `${MANIFEST_FILE}: '${f}' is required`
    }
    case 'additionalProperties': {
      const f = at === '' ? String(e.params.additionalProperty) : `${at}.${String(e.params.additionalProperty)}`
      return `${MANIFEST_FILE}: '${f}' is not a known field`
    }
    case 'enum':
      return `${MANIFEST_FILE}: '${at}' must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    case 'pattern':
      return `${MANIFEST_FILE}: '${at}' ${PATTERN_TEXT[String(e.params.pattern)] ?? `must match ${String(e.params.pattern)}`}`
    case 'type':
      return `${MANIFEST_FILE}: '${at === '' ? '(root)' : at}' must be ${/^[aeiou]/.test(String(e.params.type)) ? 'an' : 'a'} ${String(e.params.type)}`
    default:
      return `${MANIFEST_FILE}: '${at === '' ? '(root)' : at}' ${e.message ?? 'is invalid'}`
  }
}

/** Validates a parsed plugin.json; throws MANIFEST_INVALID listing every problem. */
export function parseManifest(raw: unknown): ParsedManifest {
  const validate = validator()
  if (!validate(raw))
    throw new PlatformError(PLUGINS_ERRORS.MANIFEST_INVALID, { errors: validate.errors!.map(describe) })
  const m = raw as {
    name: string
    version: string
    description?: string
    entry?: string
    sandbox?: SandboxKind
    permissions?: Partial<Manifest['permissions']>
    limits?: Partial<Manifest['limits']>
  }
  // `platform.plugins.dirs` is a config key, so no grant could ever name a plugin called `dirs`
  if (m.name === 'dirs')
    throw new PlatformError(PLUGINS_ERRORS.MANIFEST_INVALID, {
      errors: [`${MANIFEST_FILE}: 'name' 'dirs' is reserved`]
    })
  const entry = m.entry ?? 'index.js'
  if (isAbsolute(entry) || entry.split(/[\\/]/).includes('..'))
    throw new PlatformError(PLUGINS_ERRORS.MANIFEST_INVALID, {
      errors: [`${MANIFEST_FILE}: 'entry' must be a path inside the plugin folder, got '${entry}'`]
    })
  const askedLimits = { ...(m.limits ?? {}) }
  return {
    askedLimits,
    manifest: {
      name: m.name,
      version: m.version,
      ...(m.description !== undefined ? { description: m.description } : {}),
      entry,
      sandbox: m.sandbox ?? DEFAULT_SANDBOX,
      permissions: {
        net: [...(m.permissions?.net ?? [])],
        kv: m.permissions?.kv === true,
        env: [...(m.permissions?.env ?? [])]
      },
      limits: { ...DEFAULT_LIMITS, ...askedLimits }
    }
  }
}

/** Reads and validates `<dir>/plugin.json`; the entry must exist inside the folder. */
export function readManifest(dir: string): ParsedManifest & { entryPath: string } {
  let text: string
  try {
    text = readRegularFile(join(dir, MANIFEST_FILE), MAX_MANIFEST_BYTES).toString('utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    throw new PlatformError(PLUGINS_ERRORS.MANIFEST_INVALID, {
      errors: [
        code === 'ENOENT'
          ? `${MANIFEST_FILE} is missing`
          : // no errno code: refused by readRegularFile (a FIFO, a device, too large)
            `${MANIFEST_FILE}: ${code === undefined ? '' : 'cannot read: '}${(e as Error).message}`
      ]
    })
  }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (e) {
    throw new PlatformError(PLUGINS_ERRORS.MANIFEST_INVALID, {
      errors: [`${MANIFEST_FILE}: invalid JSON: ${(e as Error).message}`]
    })
  }
  const parsed = parseManifest(raw)
  const entryPath = resolve(dir, parsed.manifest.entry)
  const rel = relative(resolve(dir), entryPath)
  if (rel.startsWith('..') || isAbsolute(rel) || rel.split(sep).includes('..'))
    throw new PlatformError(PLUGINS_ERRORS.MANIFEST_INVALID, {
      errors: [`${MANIFEST_FILE}: 'entry' must be a path inside the plugin folder`]
    })
  let isFile = false
  try {
    isFile = statSync(entryPath).isFile()
  } catch {
    /* missing */
  }
  if (!isFile)
    throw new PlatformError(PLUGINS_ERRORS.MANIFEST_INVALID, {
      errors: [`${MANIFEST_FILE}: 'entry' names '${parsed.manifest.entry}', which does not exist in the plugin folder`]
    })
  return { ...parsed, entryPath }
}
