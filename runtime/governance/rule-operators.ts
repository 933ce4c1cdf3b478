/**
 * The rule operators of the third-party toolkit's `rules:` schema, with its semantics: loose
 * equality that is numeric-aware (1 equals 1.0), ordering of numbers or of values of one kind
 * (values that cannot be ordered compare as equal), `in`/`not_in` against a
 * list, `contains` as substring or membership, and `matches` as an unanchored regex search.
 * A missing (undefined or null) context value never matches: the caller checks that first.
 */
import { GOVERNANCE_ERRORS } from './errors.js'
import { PlatformError } from '../contracts/index.js'

export const OPERATORS = ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'not_in', 'contains', 'matches'] as const
export type Operator = (typeof OPERATORS)[number]

/** A compiled condition on one (present) context value. */
export type Test = (actual: unknown) => boolean

export function looseEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a === 'number' && typeof b === 'number') return a === b // NaN never equals
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint'))
      return Number(a) === Number(b)
    return false
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!looseEquals(a[i], b[i])) return false
    return true
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    for (const k of ka) if (!Object.hasOwn(b, k) || !looseEquals(a[k], b[k])) return false
    return true
  }
  return false
}

/** -1, 0 or 1; values that cannot be ordered against each other compare as 0. */
export function compareLoose(a: unknown, b: unknown): number {
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    const x = Number(a)
    const y = Number(b)
    if (x < y) return -1
    if (x > y) return 1
    if (x === y) return 0
    // NaN sorts above every number, as Double.compare does
    return Number.isNaN(x) ? (Number.isNaN(y) ? 0 : 1) : -1
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1
  return 0
}

export function containsLoose(haystack: unknown, needle: unknown): boolean {
  if (typeof haystack === 'string') return needle !== null && needle !== undefined && haystack.includes(textOf(needle))
  if (Array.isArray(haystack)) {
    for (const item of haystack) if (looseEquals(item, needle)) return true
    return false
  }
  if (isPlainObject(haystack)) return typeof needle === 'string' && Object.hasOwn(haystack, needle)
  return false
}

/** String form used by `matches` and `contains` on strings. */
export function textOf(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'object' && v !== null) {
    try {
      return JSON.stringify(v)
    } catch {
      return String(v)
    }
  }
  return String(v)
}

const INLINE_FLAGS = /^\(\?([a-zA-Z]+)\)/
const JS_FLAG: Record<string, string> = { i: 'i', m: 'm', s: 's', u: 'u' }

/**
 * Compiles a toolkit regex for JavaScript: leading inline flags such as `(?i)` (which Node
 * rejects as "Invalid group") become RegExp flags; an unsupported flag is a load error.
 */
export function compileToolkitRegex(pattern: string, where: string): RegExp {
  let body = pattern
  const flags = new Set<string>()
  for (let m = INLINE_FLAGS.exec(body); m !== null; m = INLINE_FLAGS.exec(body)) {
    for (const f of m[1]!) {
      const js = JS_FLAG[f]
      if (js === undefined)
        throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
          detail: `unsupported inline regex flag '(?${f})' in pattern '${pattern}' at ${where} (supported: i, m, s, u)`
        })
      flags.add(js)
    }
    body = body.slice(m[0].length)
  }
  try {
    return new RegExp(body, [...flags].join(''))
  } catch (err) {
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
      detail: `invalid regex '${pattern}' at ${where}: ${(err as Error).message}`
    })
  }
}

/** Builds the test for one condition; validates the value's shape at load time. */
export function compileTest(op: string, value: unknown, where: string): Test {
  switch (op) {
    case 'eq':
      return (a) => looseEquals(a, value)
    case 'ne':
      return (a) => !looseEquals(a, value)
    case 'gt':
      return (a) => compareLoose(a, value) > 0
    case 'lt':
      return (a) => compareLoose(a, value) < 0
    case 'gte':
      return (a) => compareLoose(a, value) >= 0
    case 'lte':
      return (a) => compareLoose(a, value) <= 0
    case 'in':
    case 'not_in': {
      if (!Array.isArray(value))
        throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
          detail: `operator '${op}' needs a list value at ${where}`
        })
      const list = value
      const inList = (a: unknown): boolean => {
        for (const v of list) if (looseEquals(a, v)) return true
        return false
      }
      return op === 'in' ? inList : (a) => !inList(a)
    }
    case 'contains':
      return (a) => containsLoose(a, value)
    case 'matches': {
      if (typeof value !== 'string')
        throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
          detail: `operator 'matches' needs a string pattern at ${where}`
        })
      const re = compileToolkitRegex(value, where)
      // a RegExp without the g/y flags keeps no state, so one instance is shared by every call
      return (a) => re.test(typeof a === 'string' ? a : textOf(a))
    }
    default:
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
        detail: `unknown operator '${op}' at ${where} (supported: ${OPERATORS.join(', ')})`
      })
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
