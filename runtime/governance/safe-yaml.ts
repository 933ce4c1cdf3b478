import { parseDocument, LineCounter, isMap as isYamlMap, isSeq as isYamlSeq, isScalar, type Node } from 'yaml'
import { GOVERNANCE_ERRORS } from './errors.js'
import { PlatformError } from '../contracts/index.js'

/** A parsed document and where its keys are: `lineOf(['rules', 0, 'priorty'])` is that key's line. */
export interface ParsedYaml {
  readonly value: unknown
  lineOf(path: readonly (string | number)[]): number | undefined
}

/**
 * Parses YAML the safe way: YAML 1.2 core schema only (no `!!js/*` or custom tags: an unknown
 * tag is an error, not a string), duplicate keys rejected, aliases bounded (no billion laughs).
 */
export function parseSafeYaml(text: string, source: string): unknown {
  return parseSafeYamlWithLines(text, source).value
}

export function parseSafeYamlWithLines(text: string, source: string): ParsedYaml {
  const lines = new LineCounter()
  const doc = parseDocument(text, {
    schema: 'core',
    uniqueKeys: true,
    merge: false,
    prettyErrors: false,
    strict: true,
    lineCounter: lines
  })
  const problem = doc.errors[0] ?? doc.warnings[0]
  if (problem !== undefined)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
      detail: `yaml parse failed: ${source}${problem.linePos?.[0] !== undefined ? ` line ${problem.linePos[0].line}` : ''}: ${firstLine(problem.message)}`
    })
  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount: 100 })
  } catch (err) {
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
      detail: `yaml parse failed: ${source}: ${firstLine((err as Error).message)}`
    })
  }
  return {
    value,
    lineOf(path) {
      let node: unknown = doc.contents
      let offset: number | undefined
      for (const seg of path) {
        if (isYamlMap(node)) {
          const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg))
          if (pair === undefined) return undefined
          offset = (pair.key as Node).range?.[0]
          node = pair.value
        } else if (isYamlSeq(node) && typeof seg === 'number') {
          node = node.items[seg]
          offset = (node as Node | undefined)?.range?.[0]
        } else {
          return undefined
        }
      }
      return offset === undefined ? undefined : lines.linePos(offset).line
    }
  }
}

function firstLine(msg: string): string {
  const i = msg.indexOf('\n')
  return i < 0 ? msg : msg.slice(0, i)
}

export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
