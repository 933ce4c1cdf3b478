import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import type { JsonObject } from './types.js'

export const SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema'

/** Parameter of a programmatic tool or prompt: name, description, required, type. */
export interface ParamSpec {
  name: string
  description?: string
  required?: boolean
  /** JSON type, or an injectable (`broadcaster`, `config`, `logger`) that never reaches the schema. */
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'broadcaster' | 'config' | 'logger'
  enum?: unknown[]
  items?: JsonObject
}

export const INJECTABLE_TYPES: ReadonlySet<string> = new Set(['broadcaster', 'config', 'logger'])

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false })

/** The input schema clients see: JSON Schema 2020-12 with `$schema`, an object at the top. */
export function normalizeInputSchema(input: unknown): JsonObject {
  const s: JsonObject =
    input !== null && typeof input === 'object' && !Array.isArray(input) ? { ...(input as JsonObject) } : {}
  if (s.type === undefined) s.type = 'object'
  if (s.$schema === undefined) return { $schema: SCHEMA_2020_12, ...s }
  return s
}

export function schemaFromParams(params: ParamSpec[]): JsonObject {
  const properties: JsonObject = {}
  const required: string[] = []
  for (const p of params) {
    if (p.type !== undefined && INJECTABLE_TYPES.has(p.type)) continue
    const prop: JsonObject = { type: p.type ?? 'string' }
    if (p.description !== undefined && p.description !== '') prop.description = p.description
    if (p.enum !== undefined) prop.enum = p.enum
    if (p.type === 'array') prop.items = p.items ?? {}
    properties[p.name] = prop
    if (p.required !== false) required.push(p.name)
  }
  const out: JsonObject = { $schema: SCHEMA_2020_12, type: 'object', properties }
  if (required.length > 0) out.required = required
  return out
}

const ACCEPT_ALL = (() => true) as unknown as ValidateFunction

/** Compiles once; a schema ajv cannot compile validates nothing (the tool still gets its arguments). */
export function compileValidator(schema: JsonObject): ValidateFunction {
  try {
    const { $schema: _ignored, ...rest } = schema
    return ajv.compile(rest)
  } catch {
    return ACCEPT_ALL
  }
}

export function describeErrors(v: ValidateFunction): string {
  const e = v.errors?.[0]
  if (e === undefined) return 'invalid arguments'
  const where = e.instancePath === '' ? 'arguments' : `arguments${e.instancePath.replace(/\//g, '.')}`
  if (e.keyword === 'required')
    return `Missing required parameter: ${(e.params as { missingProperty: string }).missingProperty}`
  return `${where} ${e.message ?? 'is invalid'}`
}

/** `x-mcp-header` annotations (SEP-2243): top-level primitive properties mirrored into `Mcp-Param-*`. */
export interface HeaderParam {
  prop: string
  header: string
  type: string
}
export function headerParams(schema: JsonObject): HeaderParam[] {
  const props = schema.properties
  if (props === null || typeof props !== 'object') return []
  const out: HeaderParam[] = []
  for (const [prop, def] of Object.entries(props as Record<string, JsonObject>)) {
    const h = def?.['x-mcp-header']
    if (typeof h === 'string' && h !== '')
      out.push({ prop, header: h.toLowerCase(), type: typeof def.type === 'string' ? def.type : 'string' })
  }
  return out
}
