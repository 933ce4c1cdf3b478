import type { AiRequest } from '../contracts/index.js'
import type { ScopeConfig, ScopeGuardrail, ScopeVerdict, Tier } from './contract.js'

/**
 * RULE_BASED tier: forbidden topics as word-boundaried
 * substrings of the lowercased message, then six built-in hijacking probes, each skipped when the
 * purpose lies in the probe's own domain (a dental assistant may talk about dosage; a support bot
 * may not). Synchronous and allocation-light: it is also the fallback of the embedding tiers.
 */
const CODE =
  /\b(cod(?:e|ing)|program|software|develop|engineer|computer|technical|debug|repo(?:sitor)?|git\b|patch|codebase|script|sandbox)/i
const MEDICAL = /\b(medic|dental|dentist|health|clinic|doctor|patient|nurse|pharma|therap|veterinar)/i
const LEGAL = /\b(legal|law\b|lawyer|attorney|paralegal|litigat)/i
const FINANCIAL = /\b(financ|invest|bank|trading|wealth|account|insur|brokerage)/i

export const HIJACKING_PROBES: readonly { readonly name: string; readonly probe: RegExp; readonly domain: RegExp }[] = [
  {
    name: 'code request',
    probe: /\b(write|generate|give me|show me).{0,20}(code|function|script|program|algorithm)\b/i,
    domain: CODE
  },
  {
    name: 'language names',
    probe: /\bpython\b|\bjavascript\b|\btypescript\b|\bjava\b|\bruby\b|\brust\b|\bgolang\b|\bc\+\+\b/i,
    domain: CODE
  },
  { name: 'data structures', probe: /\b(linked\s*list|binary\s*tree|hash\s*map|sorting\s*algorithm)\b/i, domain: CODE },
  { name: 'medical', probe: /\b(diagnose|diagnosis|prescribe|prescription|dosage|symptom)\b/i, domain: MEDICAL },
  { name: 'legal', probe: /\b(sue|lawsuit|attorney|legal\s*action|class\s*action)\b/i, domain: LEGAL },
  {
    name: 'financial',
    probe: /\b(invest|stock\s*pick|financial\s*advice|buy\s*bitcoin|crypto\s*recommendation)\b/i,
    domain: FINANCIAL
  }
]

const LETTER_OR_DIGIT = /[\p{L}\p{Nd}]/u

export const IN_SCOPE_UNSCORED: ScopeVerdict = Object.freeze({
  outcome: 'IN_SCOPE',
  reason: '',
  similarity: Number.NaN
})

/** The text the scoring tiers screen; undefined (admit unscored) for an unrestricted scope or no message text. */
export function screenedText(request: AiRequest, scope: ScopeConfig): string | undefined {
  if (scope.unrestricted) return undefined
  const message = request?.message
  return typeof message !== 'string' || message.trim() === '' ? undefined : message
}

/** What a scope needs on every request, worked out once: lowered topics and the probes its purpose leaves on. */
interface Prepared {
  topics: { topic: string; lowered: string }[]
  probes: RegExp[]
}

// Keyed by the config object: configs built by this module are frozen, so the entry never goes stale.
const prepared = new WeakMap<ScopeConfig, Prepared>()

function prepare(scope: ScopeConfig): Prepared {
  let p = prepared.get(scope)
  if (p === undefined) {
    const purpose = (scope.purpose ?? '').toLowerCase()
    p = {
      topics: scope.forbiddenTopics
        .filter((t) => typeof t === 'string' && t.trim() !== '')
        .map((topic) => ({ topic, lowered: topic.toLowerCase() })),
      // the message is lowercased before matching, so the probes run without the slower `i` flag
      probes: HIJACKING_PROBES.filter((x) => !x.domain.test(purpose)).map((x) => new RegExp(x.probe.source))
    }
    if (Object.isFrozen(scope)) prepared.set(scope, p)
  }
  return p
}

export class RuleBasedScopeGuardrail implements ScopeGuardrail {
  tier(): Tier {
    return 'RULE_BASED'
  }

  evaluate(request: AiRequest, scope: ScopeConfig): ScopeVerdict {
    if (scope.unrestricted) return IN_SCOPE_UNSCORED
    const message = request?.message
    if (typeof message !== 'string') return IN_SCOPE_UNSCORED
    const lowered = message.toLowerCase()
    const p = prepare(scope)
    for (const t of p.topics) {
      if (containsWord(lowered, t.lowered)) {
        return {
          outcome: 'OUT_OF_SCOPE',
          reason: `message references forbidden topic: '${t.topic}'`,
          similarity: Number.NaN
        }
      }
    }
    for (const probe of p.probes) {
      const m = probe.exec(lowered)
      if (m !== null)
        return {
          outcome: 'OUT_OF_SCOPE',
          reason: `message matched built-in hijacking probe: '${m[0]}'`,
          similarity: Number.NaN
        }
    }
    return IN_SCOPE_UNSCORED
  }
}

/** Substring match whose neighbours on both sides are not letters or digits (or are the string's edges). */
export function containsWord(haystack: string, needle: string): boolean {
  if (needle === '') return false
  let i = haystack.indexOf(needle)
  while (i >= 0) {
    const end = i + needle.length
    const before = i === 0 || !LETTER_OR_DIGIT.test(haystack[i - 1]!)
    const after = end === haystack.length || !LETTER_OR_DIGIT.test(haystack[end]!)
    if (before && after) return true
    i = haystack.indexOf(needle, i + 1)
  }
  return false
}
