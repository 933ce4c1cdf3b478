import { parseDocument } from 'yaml'
import { PolicyLoadError } from './errors.js'

/**
 * Parses YAML the safe way: YAML 1.2 core schema only (no `!!js/*` or custom tags: an unknown
 * tag is an error, not a string), duplicate keys rejected, aliases bounded (no billion laughs).
 */
export function parseSafeYaml (text: string, source: string): unknown {
  const doc = parseDocument(text, { schema: 'core', uniqueKeys: true, merge: false, prettyErrors: false, strict: true })
  const problem = doc.errors[0] ?? doc.warnings[0]
  if (problem !== undefined) throw new PolicyLoadError(`yaml parse failed: ${source}: ${firstLine(problem.message)}`)
  try {
    return doc.toJS({ maxAliasCount: 100 })
  } catch (err) {
    throw new PolicyLoadError(`yaml parse failed: ${source}: ${firstLine((err as Error).message)}`)
  }
}

function firstLine (msg: string): string {
  const i = msg.indexOf('\n')
  return i < 0 ? msg : msg.slice(0, i)
}

export function isMap (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
