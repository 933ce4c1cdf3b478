import { createRequire } from 'node:module'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { AiResponseFormat } from '../ai/index.js'
import { invalid, isObject } from './response-input.js'

/**
 * `text.format` of a create (`{type: 'text'}`, `{type: 'json_object'}`, `{type: 'json_schema',
 * name, schema, description?, strict?}`) as the turn's response format; undefined for plain text.
 */
export function parseTextFormat(format: unknown): AiResponseFormat | undefined {
  return parseFormat(format, 'text.format', (f) => [f, 'text.format'])
}

/**
 * Chat's `response_format` (`{type: 'json_schema', json_schema: {name, schema, ...}}`) as the
 * same format, each refusal naming the chat parameter.
 */
export function parseChatFormat(format: unknown): AiResponseFormat | undefined {
  return parseFormat(format, 'response_format', (f) => {
    if (!isObject(f.json_schema))
      throw invalid('response_format.json_schema', "'json_schema' must be an object with 'name' and 'schema'")
    return [f.json_schema, 'response_format.json_schema']
  })
}

/** What both APIs share: the type, then the `json_schema` fields where `fields` finds them, with their parameter. */
function parseFormat(
  format: unknown,
  at: 'text.format' | 'response_format',
  fields: (f: Record<string, unknown>) => [Record<string, unknown>, string]
): AiResponseFormat | undefined {
  if (format === undefined || format === null) return undefined
  if (!isObject(format)) throw invalid(at, `'${at}' must be an object with a 'type'`)
  if (format.type === 'text') return undefined
  if (format.type === 'json_object') return { type: 'json_object' }
  if (format.type !== 'json_schema')
    throw invalid(`${at}.type`, "the format type must be 'text', 'json_object' or 'json_schema'")
  return jsonSchema(...fields(format))
}

/** The `json_schema` format's fields, checked; the schema must be a JSON schema by its meta-schema. */
function jsonSchema(f: Record<string, unknown>, at: string): AiResponseFormat {
  const { name, schema, description, strict } = f
  if (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(name))
    throw invalid(`${at}.name`, "a format's name is 1 to 64 letters, digits, '_' or '-'")
  if (description !== undefined && description !== null && typeof description !== 'string')
    throw invalid(`${at}.description`, "'description' must be a string")
  if (strict !== undefined && strict !== null && typeof strict !== 'boolean')
    throw invalid(`${at}.strict`, "'strict' must be true or false")
  if (!isObject(schema)) throw invalid(`${at}.schema`, "'schema' must be a JSON schema object")
  const wrong = schemaError(schema)
  if (wrong !== undefined) throw invalid(`${at}.schema`, `'schema' is not a valid JSON schema: ${wrong}`)
  return {
    type: 'json_schema',
    name,
    schema,
    ...(typeof description === 'string' ? { description } : {}),
    ...(typeof strict === 'boolean' ? { strict } : {})
  }
}

let metaAjv: Ajv2020 | undefined

/**
 * Why `schema` is not a JSON schema, or undefined. It is checked as data against its meta-schema
 * (2020-12, or draft-07 when its `$schema` says so), never compiled: no code is generated from
 * client input. Built at the first schema, so a server that never sees one pays nothing.
 */
function schemaError(schema: Record<string, unknown>): string | undefined {
  if (metaAjv === undefined) {
    metaAjv = new Ajv2020({ strict: false, validateFormats: false, logger: false })
    // the meta-schema of draft-07, which most schema generators still write
    metaAjv.addMetaSchema(createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-07.json') as object)
  }
  try {
    if (metaAjv.validateSchema(schema) === true) return undefined
  } catch {
    return `its $schema '${String(schema.$schema)}' is not one this server knows (JSON Schema 2020-12 or draft-07)`
  }
  return metaAjv.errorsText(metaAjv.errors, { dataVar: 'schema' })
}
