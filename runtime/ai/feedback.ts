/**
 * The learning-signal loop's carry step: recent deny and prefer decisions of the turn's subject
 * go back into its system prompt, so the model sees why it was stopped (or what is preferred)
 * instead of hitting the same wall again. The subject is the tightest identity the request
 * carries that has guidance: its conversation, else its session, else its user; a turn with no
 * identity gets nothing (another caller's guidance must never leak into it).
 *
 * Sources, per subject dimension: the decision log's index of deny and prefer entries recorded
 * by this process (so a Prefer recorded at this turn's admission steers this same turn)
 * and, with `platform.ai.governance.memory.enabled`, the memory sink's lessons (which survive a
 * restart; the sink drops expired and below-floor ones on read). Both render a decision the
 * same way, so de-duplication by line covers both. Operators' facts (memory sink too) lead the
 * block whatever dimension they were written under.
 */
import {
  SUBJECT_DIMENSIONS,
  lessonText,
  namespaceKey,
  type GovernanceMemorySink,
  type GovernanceService,
  type Subject
} from '../governance/index.js'
import type { AiRequest, DecisionEntry } from '../contracts/index.js'

/** Longest guidance line, in the prompt and on the wire. */
export const FEEDBACK_LINE_CHARS = 512
export const FEEDBACK_HEADING = 'Governance guidance from earlier policy decisions; follow it:'

export interface FeedbackOptions {
  /** Distinct lines at most (`platform.ai.governance.feedback.max-items`); 0 turns the loop off. */
  maxItems: number
}

const SUBJECT_FIELD = {
  conversation_id: 'conversationId',
  session_id: 'sessionId',
  user_id: 'userId'
} as const satisfies Record<(typeof SUBJECT_DIMENSIONS)[number][0], keyof Subject>

/** One line, whitespace runs (newlines too) folded, so a reason cannot forge lines of the block. */
function cap(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > FEEDBACK_LINE_CHARS ? line.slice(0, FEEDBACK_LINE_CHARS - 1) + '…' : line
}

/** The decision log's lookup of one subject dimension, built without a computed key. */
const SUBJECT_OF: Record<keyof typeof SUBJECT_FIELD, (id: string) => Subject> = {
  conversation_id: (id) => ({ conversationId: id }),
  session_id: (id) => ({ sessionId: id }),
  user_id: (id) => ({ userId: id })
}

/** True unless `policy` is a kill switch: its denies say nothing about what the subject asked. */
function isLesson(gov: GovernanceService, policy: string): boolean {
  for (const k of gov.chain.killSwitches) if (k.name === policy) return false
  return true
}

const LESSONS = ['deny', 'prefer'] as const

/** The decision log's deny and prefer entries for one dimension of the subject, newest first. */
function logged(gov: GovernanceService, key: keyof typeof SUBJECT_FIELD, id: string, max: number): DecisionEntry[] {
  // scan a little further than the bound: duplicates collapse
  return gov.decisionLog.forSubject(SUBJECT_OF[key](id), LESSONS, max * 4)
}

/** The guidance of logged entries, newest first, at most `max`. */
function loggedLines(gov: GovernanceService, entries: readonly DecisionEntry[], max: number): Set<string> {
  const lines = new Set<string>()
  for (const e of entries) {
    if (lines.size >= max) break
    if (isLesson(gov, e.policy_name)) lines.add(cap(lessonText(e)))
  }
  return lines
}

/**
 * The guidance lines for a request, de-duplicated, at most `maxItems`: the operators' facts of
 * every dimension of its subject (tightest first, each newest first), then the policy guidance of
 * its tightest dimension that has some (newest first); may throw or reject. Without the memory
 * sink every source is in this process and the answer comes at once, with no promise: most turns
 * have no guidance and pay for no await.
 */
export function feedbackLines(
  gov: GovernanceService,
  request: AiRequest,
  opts: FeedbackOptions
): string[] | Promise<string[]> {
  if (opts.maxItems <= 0) return []
  if (gov.memory !== undefined) return remembered(gov, gov.memory, request, opts)
  for (const [key] of SUBJECT_DIMENSIONS) {
    const id = request[SUBJECT_FIELD[key]]
    if (typeof id !== 'string' || id === '') continue
    const entries = logged(gov, key, id, opts.maxItems)
    // most subjects have no deny or prefer logged: no set built for nothing
    if (entries.length === 0) continue
    const lines = loggedLines(gov, entries, opts.maxItems)
    if (lines.size > 0) return [...lines]
  }
  return []
}

/** `feedbackLines` with the memory sink: its facts and lessons beside the decision log's. */
async function remembered(
  gov: GovernanceService,
  memory: GovernanceMemorySink,
  request: AiRequest,
  opts: FeedbackOptions
): Promise<string[]> {
  const scan = opts.maxItems * 4
  // a fact is written under one namespace (a user's or a session's), never copied to the others
  // like a decision's lessons: a tighter dimension's guidance must not hide it
  const facts = new Set<string>()
  let guidance: Set<string> | undefined
  for (const [key, prefix] of SUBJECT_DIMENSIONS) {
    const id = request[SUBJECT_FIELD[key]]
    if (typeof id !== 'string' || id === '') continue
    const namespace = namespaceKey(prefix, id)
    for (const f of await memory.facts(namespace, opts.maxItems)) facts.add(cap(f.text))
    if (guidance !== undefined) continue
    const lines = loggedLines(gov, logged(gov, key, id, opts.maxItems), opts.maxItems)
    for (const l of await memory.lessons(namespace, scan)) {
      if (lines.size >= opts.maxItems) break
      if ('policy' in l.provenance && isLesson(gov, l.provenance.policy)) lines.add(cap(l.text))
    }
    if (lines.size > 0) guidance = lines
  }
  // most turns have no guidance: no sets and arrays built for nothing
  if (facts.size === 0 && guidance === undefined) return []
  return [...new Set([...facts, ...(guidance ?? [])])].slice(0, opts.maxItems)
}

/** The system prompt with the guidance block appended (the scope preamble, if any, still leads). */
export function withFeedback(systemPrompt: string, lines: readonly string[]): string {
  const block = FEEDBACK_HEADING + lines.map((l) => `\n- ${l}`).join('')
  return systemPrompt.trim() === '' ? block : `${systemPrompt}\n\n${block}`
}

/** The lines a final system prompt still carries (a later step may have replaced the prompt). */
export function carriedLines(finalPrompt: string, lines: readonly string[]): string[] {
  return lines.filter((l) => finalPrompt.includes(`\n- ${l}`))
}
