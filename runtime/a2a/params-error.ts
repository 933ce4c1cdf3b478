/**
 * The -32602 error for params that failed their schema, in words built from ajv's error: the
 * field as a path (`message.parts[0].text`) and the rule it broke.
 */
import type { ErrorObject } from 'ajv/dist/2020.js'
import type { PlatformError } from '../contracts/index.js'
import { invalidParams } from './rpc-error.js'

type Obj = Record<string, unknown>

/** ajv's errors of one failed validation (made with `verbose`, so each carries its schema and value). */
export function paramsError(errors: ErrorObject[] | null | undefined): PlatformError {
  // validation stops at the first failing keyword; its error comes last, after the failed branches of a oneOf
  const all = errors ?? []
  return invalidParams(describe(all[all.length - 1]))
}

/** `/message/parts/0/text` as `message.parts[0].text`; the params themselves as `params`. */
function fieldOf(pointer: string): string {
  if (pointer === '') return 'params'
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((at, s) => (/^\d+$/.test(s) ? `${at}[${s}]` : at === '' ? s : `${at}.${s}`), '')
}

/** A type as a noun with its article. */
const NOUN: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'a list'
}

/** The rule a value broke, in words: the field's range in full rather than the one bound it missed. */
function rule(e: ErrorObject): string {
  const s = (e.parentSchema ?? {}) as Obj
  const got = `, got ${JSON.stringify(e.data)}`
  const types = ([] as unknown[]).concat(s.type ?? []).filter((t) => t !== 'null')
  if (types.includes('integer') && s.minimum !== undefined && s.maximum !== undefined)
    return `must be an integer from ${String(s.minimum)} to ${String(s.maximum)}${got}`
  if (types.includes('string') && (s.minLength !== undefined || s.maxLength !== undefined))
    return s.minLength === undefined
      ? `must be a string of at most ${String(s.maxLength)} characters`
      : `must be a string of ${String(s.minLength)} to ${String(s.maxLength)} characters`
  switch (e.keyword) {
    case 'type':
      return `must be ${types.map((t) => NOUN[t as string] ?? String(t)).join(' or ')}`
    case 'enum':
      return `must be one of ${(e.schema as unknown[]).filter((v) => v !== null).join(', ')}${got}`
    case 'minItems':
      return `must hold at least ${String(e.params.limit)} item${e.params.limit === 1 ? '' : 's'}`
    case 'oneOf': {
      const names = (e.schema as Obj[]).map((b) => (b.required as string[] | undefined)?.[0])
      if (names.every((n) => n !== undefined)) return `must set exactly one of ${names.join(', ')}`
    }
  }
  return e.message ?? 'is invalid'
}

function describe(e: ErrorObject | undefined): string {
  if (e === undefined) return 'params are invalid'
  const at = fieldOf(e.instancePath)
  if (e.keyword === 'required') {
    const missing = String(e.params.missingProperty)
    return `${at === 'params' ? missing : `${at}.${missing}`} is required`
  }
  return `${at} ${rule(e)}`
}
