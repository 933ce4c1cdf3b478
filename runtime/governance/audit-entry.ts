/** How a decision entry's context snapshot is cut down from the request. */
import type { AiRequest, Phase } from '../contracts/index.js'

export const SNAPSHOT_MESSAGE_CHARS = 200
/** Longest string kept for a metadata value in a snapshot (keeps the LMDB log bounded). */
export const SNAPSHOT_VALUE_CHARS = 1000

export function truncate(s: string, n: number): string {
  return s.length > n ? s.slice(0, n) + '…' : s
}

/** Primitive or its string form (a list or map is JSON), so the snapshot is flat and serialisable. */
export function coerce(v: unknown): string | number | boolean | null {
  if (v === null || v === undefined) return null
  if (typeof v === 'string') return truncate(v, SNAPSHOT_VALUE_CHARS)
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v)
  if (typeof v === 'boolean') return v
  if (typeof v === 'bigint') return v.toString()
  let s: string | undefined = Array.isArray(v) ? plainList(v) : undefined
  if (s !== undefined) return truncate(s, SNAPSHOT_MESSAGE_CHARS)
  try {
    s = JSON.stringify(v) ?? String(v)
  } catch {
    s = String(v)
  }
  return truncate(s, SNAPSHOT_MESSAGE_CHARS)
}

/** Printable ASCII but `"` and `\`: such a string's JSON is itself in quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

/**
 * JSON.stringify of a list of plain strings (a roles list, in both phases' snapshots of every
 * turn), built by concatenation at half its cost; undefined for any other list.
 */
function plainList(a: unknown[]): string | undefined {
  if ((a as { toJSON?: unknown }).toJSON !== undefined) return undefined
  let s = '['
  for (let i = 0; i < a.length; i++) {
    const x = a[i]
    if (typeof x !== 'string' || !PLAIN.test(x)) return undefined
    s += i === 0 ? `"${x}"` : `,"${x}"`
  }
  return s + ']'
}

/** The redaction-safe view of a request: message cut to 200 characters, metadata coerced to primitives. */
export function snapshotOf(phase: Phase, r: AiRequest, response: string): Record<string, unknown> {
  const s: Record<string, unknown> = {
    phase: phase === 'PRE_ADMISSION' ? 'pre_admission' : 'post_response',
    message: truncate(typeof r.message === 'string' ? r.message : '', SNAPSHOT_MESSAGE_CHARS)
  }
  if (r.model != null) s.model = r.model
  if (r.userId != null) s.user_id = r.userId
  if (r.sessionId != null) s.session_id = r.sessionId
  if (r.agentId != null) s.agent_id = r.agentId
  if (r.conversationId != null) s.conversation_id = r.conversationId
  const md = r.metadata
  if (md != null) for (const k in md) if (Object.hasOwn(md, k) && !Object.hasOwn(s, k)) s[k] = coerce(md[k])
  // the client's claims under their own names, so the log never shows a claim as a fact
  const cm = r.clientMetadata
  if (cm != null)
    for (const k in cm) {
      if (!Object.hasOwn(cm, k)) continue
      const key = clientKey(k)
      if (!Object.hasOwn(s, key)) s[key] = coerce(cm[k])
    }
  if (phase === 'POST_RESPONSE' && typeof response === 'string')
    s.response_preview = truncate(response, SNAPSHOT_MESSAGE_CHARS)
  return s
}

/** Client metadata keys with their prefix, up to CLIENT_KEYS_KEPT of them (clients choose the keys). */
const clientKeys = new Map<string, string>()
const CLIENT_KEYS_KEPT = 1024

/**
 * `client.<k>`, the same string every time: a key built anew is looked up in V8's string table
 * when it lands on the snapshot, which cost a third of building a snapshot with one client key.
 */
function clientKey(k: string): string {
  let key = clientKeys.get(k)
  if (key === undefined) {
    key = `client.${k}`
    if (clientKeys.size < CLIENT_KEYS_KEPT) clientKeys.set(k, key)
  }
  return key
}
