/**
 * GovernanceMemorySink (opt-in, `platform.ai.governance.memory.enabled`): every deny or prefer is
 * kept in LMDB as a provenance-tagged lesson under the subject's namespace, so the learning-signal
 * loop recalls it after a restart. Expired (`ttl-seconds`) or below-floor (`min-confidence`)
 * lessons are dropped on read.
 */
import type { Database } from 'lmdb'
import type { DecisionEntry } from '../contracts/index.js'

export interface Lesson {
  namespace: string
  text: string
  confidence: number
  createdAt: string
  /** Epoch ms; 0 means no expiry. */
  expiresAt: number
  provenance: { policy: string; source: string; version: string; decision: 'deny' | 'prefer'; timestamp: string }
}

/** How sure a lesson is: a hard deny is certain, a soft preference less so. */
export const CONFIDENCE = { deny: 1.0, prefer: 0.7 } as const

export function namespaceOf(snapshot: Record<string, unknown>): string {
  const u = snapshot.user_id
  if (typeof u === 'string' && u !== '') return `user:${u}`
  const s = snapshot.session_id
  if (typeof s === 'string' && s !== '') return `session:${s}`
  return 'anonymous'
}

export class GovernanceMemorySink {
  private seq = 0
  constructor(
    private readonly db: Database<Lesson, [string, number, number]>,
    readonly ttlSeconds: number,
    readonly minConfidence: number,
    private readonly now: () => number = Date.now
  ) {}

  /** Writes a lesson for a deny or prefer entry; other decisions are ignored. */
  accept(e: DecisionEntry): Promise<void> | undefined {
    if (e.decision !== 'deny' && e.decision !== 'prefer') return undefined
    const t = this.now()
    const preferred = e.context_snapshot.preferred
    const lesson: Lesson = {
      namespace: namespaceOf(e.context_snapshot),
      text:
        e.decision === 'prefer' && typeof preferred === 'string'
          ? `Prefer: ${preferred} (${e.reason})`
          : `Denied by ${e.policy_name}: ${e.reason}`,
      confidence: CONFIDENCE[e.decision],
      createdAt: new Date(t).toISOString(),
      expiresAt: this.ttlSeconds > 0 ? t + this.ttlSeconds * 1000 : 0,
      provenance: {
        policy: e.policy_name,
        source: e.policy_source,
        version: e.policy_version,
        decision: e.decision,
        timestamp: e.timestamp
      }
    }
    return this.db.put([lesson.namespace, t, this.seq++], lesson).then(() => undefined)
  }

  /** Live lessons of a namespace, newest first, at most `limit`. */
  recall(namespace: string, limit = 10): Lesson[] {
    const t = this.now()
    const out: Lesson[] = []
    for (const { value } of this.db.getRange({
      start: [namespace, Number.MAX_SAFE_INTEGER],
      end: [namespace, 0],
      reverse: true
    })) {
      if (value.expiresAt !== 0 && value.expiresAt <= t) continue
      if (value.confidence < this.minConfidence) continue
      out.push(value)
      if (out.length >= limit) break
    }
    return out
  }
}
