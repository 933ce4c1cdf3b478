/** Readers for a built-in type's `config:` block; each error message is what the operator sees. */
import { GOVERNANCE_ERRORS } from '../errors.js'
import { compileToolkitRegex } from '../rule-operators.js'
import { PlatformError } from '../../contracts/index.js'

export function asString(v: unknown, dflt: string): string {
  return v === undefined || v === null ? dflt : String(v)
}

export function asNumber(v: unknown, dflt: number): number {
  if (v === undefined || v === null) return dflt
  if (typeof v === 'number') return v
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN
  if (Number.isNaN(n))
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, { detail: `expected numeric, got: ${String(v)}` })
  return n
}

export function asInt(v: unknown, dflt: number): number {
  const n = asNumber(v, dflt)
  return Math.trunc(n)
}

export function asStringList(v: unknown): string[] {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v))
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: `expected a YAML list, got: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`
    })
  const out: string[] = []
  for (const item of v) {
    if (item === null || item === undefined) continue
    const s = String(item)
    if (s.trim() !== '') out.push(s)
  }
  return out
}

/** Java's `List.toString()` shape, used in reason strings: `[a, b]`. */
export const listText = (xs: readonly string[]): string => `[${xs.join(', ')}]`

/** Java's `Double.toString` for the plain values config holds: 3 → "3.0", 2.5 → "2.5". */
export const doubleText = (n: number): string => (Number.isInteger(n) ? n.toFixed(1) : String(n))

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** `phrases` (literal) and `regex` entries, all case-insensitive; at least one is required. */
export function phrasePatterns(type: string, config: Record<string, unknown>): RegExp[] {
  const phrases = asStringList(config.phrases)
  const regex = asStringList(config.regex)
  if (phrases.length === 0 && regex.length === 0)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: `${type} requires 'phrases' or 'regex' under config`
    })
  const out = phrases.map((p) => new RegExp(escape(p), 'i'))
  for (const r of regex) {
    let re: RegExp
    try {
      re = compileToolkitRegex(r, `${type} config`)
    } catch (err) {
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, { detail: (err as Error).message })
    }
    out.push(re.flags.includes('i') ? re : new RegExp(re.source, re.flags + 'i'))
  }
  return out
}

export function anyMatch(patterns: readonly RegExp[], text: string): boolean {
  for (let i = 0; i < patterns.length; i++) if (patterns[i]!.test(text)) return true
  return false
}
