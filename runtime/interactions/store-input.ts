import { PlatformError } from '../contracts/index.js'
import { INTERACTION_ERRORS } from './errors.js'
import {
  TERMINAL_STATUSES,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type Interaction,
  type InteractionHeader,
  type InteractionStatus,
  type InteractionStep,
  type ListQuery,
  type StepType
} from './types.js'

/** The id pattern of the routes; the stores refuse anything else so a key can never be malformed. */
export const INTERACTION_ID = /^[A-Za-z0-9_-]{1,128}$/

export const MAX_LIST_LIMIT = 500

/** Owner and conversation ids are parts of index keys, and LMDB keys stop at 1978 bytes. */
export const MAX_KEY_PART_LENGTH = 256

/**
 * `Date.prototype.toISOString()`'s form only: lists sort on `createdAt` as a string, which orders
 * times correctly only when they all share one shape.
 */
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** What `start()` records on a run whose process died. */
export const INTERRUPTED_MESSAGE = 'interrupted: server restarted'

/** What another node records on a run whose node stopped renewing its lease. */
export const NODE_LOST_MESSAGE = 'interrupted: node lost'

/** The steps that end a run: a run holds at most one, and nothing follows it. */
export const TERMINAL_STEP_TYPES: ReadonlySet<StepType> = new Set(['completion', 'error'])

/** The node a store records as owner when none is configured: one process on its own data. */
export const LOCAL_NODE = 'local'

/** The refusal of a write after the run's end (a second terminal step, a step or header after it). */
export function endedError(id: string): PlatformError {
  return new PlatformError(INTERACTION_ERRORS.INTERACTION_ENDED, { id })
}

const STATUSES: ReadonlySet<string> = new Set<InteractionStatus>(['CREATED', 'RUNNING', ...TERMINAL_STATUSES])
const STEP_TYPES: ReadonlySet<string> = new Set<StepType>([
  'input',
  'text',
  'tool-call',
  'tool-result',
  'tool-error',
  'agent-step',
  'approval',
  'usage',
  'completion',
  'error'
])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const keyPart = (v: unknown) => typeof v === 'string' && v !== '' && v.length <= MAX_KEY_PART_LENGTH
const nullOr = (v: unknown, type: 'string' | 'object') =>
  v === null || (type === 'object' ? isObject(v) : typeof v === type)

export function checkId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !INTERACTION_ID.test(id))
    throw new TypeError(`interaction id must match ${String(INTERACTION_ID)}, got ${JSON.stringify(id)}`)
}

/** Throws a TypeError naming the first bad field; the caller writes nothing then. */
export function checkHeader(h: unknown): asserts h is InteractionHeader {
  if (!isObject(h)) throw new TypeError('an interaction header must be an object')
  checkId(h.id)
  const problems: [boolean, string][] = [
    [h.parentId === null || (typeof h.parentId === 'string' && INTERACTION_ID.test(h.parentId)), 'parentId'],
    [keyPart(h.conversationId), 'conversationId'],
    [keyPart(h.userId), 'userId'],
    [nullOr(h.agentId, 'string'), 'agentId'],
    [nullOr(h.model, 'string'), 'model'],
    [typeof h.status === 'string' && STATUSES.has(h.status), 'status'],
    [typeof h.background === 'boolean', 'background'],
    [typeof h.store === 'boolean', 'store'],
    [nullOr(h.finalText, 'string'), 'finalText'],
    [nullOr(h.usage, 'object'), 'usage'],
    [nullOr(h.errorMessage, 'string'), 'errorMessage'],
    [typeof h.createdAt === 'string' && ISO_UTC.test(h.createdAt), 'createdAt'],
    [typeof h.updatedAt === 'string' && ISO_UTC.test(h.updatedAt), 'updatedAt']
  ]
  for (const [ok, field] of problems)
    if (!ok) throw new TypeError(`interaction ${h.id}: bad ${field}: ${JSON.stringify(h[field])}`)
}

/** On every durable append: plain conditions, no allocation (it is most of a step's CPU beside the put). */
export function checkStep(s: unknown): asserts s is InteractionStep {
  if (!isObject(s)) throw new TypeError('a step must be an object')
  const bad = !(Number.isSafeInteger(s.seq) && (s.seq as number) >= 0)
    ? 'seq'
    : !(typeof s.type === 'string' && STEP_TYPES.has(s.type))
      ? 'type'
      : !nullOr(s.text, 'string')
        ? 'text'
        : !nullOr(s.toolName, 'string')
          ? 'toolName'
          : !isObject(s.data)
            ? 'data'
            : !nullOr(s.usage, 'object')
              ? 'usage'
              : !(typeof s.createdAt === 'string' && ISO_UTC.test(s.createdAt))
                ? 'createdAt'
                : undefined
  if (bad !== undefined) throw new TypeError(`step: bad ${bad}: ${JSON.stringify(s[bad])}`)
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

/** The key of the `Idempotency-Key` header: 1 to 255 visible ASCII characters. */
export const isIdempotencyKey = (key: unknown): key is string => typeof key === 'string' && IDEMPOTENCY_KEY.test(key)

export function checkClaim(c: unknown): asserts c is IdempotencyClaim {
  if (!isObject(c)) throw new TypeError('an idempotency claim must be an object')
  if (!isIdempotencyKey(c.key)) throw new TypeError('idempotency key must be 1 to 255 visible ASCII characters')
  if (typeof c.fingerprint !== 'string' || c.fingerprint === '' || c.fingerprint.length > 256)
    throw new TypeError('idempotency fingerprint must be a string of 1 to 256 characters')
  if (!Number.isSafeInteger(c.expiresAt)) throw new TypeError('idempotency expiresAt must be an integer (epoch ms)')
}

export function checkKeyLookup(userId: unknown, key: unknown, now: unknown): void {
  if (!keyPart(userId))
    throw new TypeError(`idempotency: userId must be a string of 1 to ${MAX_KEY_PART_LENGTH} characters`)
  if (!isIdempotencyKey(key)) throw new TypeError('idempotency key must be 1 to 255 visible ASCII characters')
  if (!Number.isSafeInteger(now)) throw new TypeError('idempotency: now must be an integer (epoch ms)')
}

/** The record's fields in one order, whatever order a store gave them back in. */
export function recordOf(r: IdempotencyRecord): IdempotencyRecord {
  return {
    userId: r.userId,
    key: r.key,
    fingerprint: r.fingerprint,
    interactionId: r.interactionId,
    expiresAt: r.expiresAt
  }
}

export function checkQuery(q: unknown): asserts q is ListQuery {
  if (!isObject(q)) throw new TypeError('a list query must be an object')
  if (!keyPart(q.userId)) throw new TypeError(`list: userId must be a string of 1 to ${MAX_KEY_PART_LENGTH} characters`)
  if (q.conversationId !== undefined && !keyPart(q.conversationId))
    throw new TypeError(`list: conversationId must be a string of 1 to ${MAX_KEY_PART_LENGTH} characters`)
  if (!Number.isInteger(q.limit) || (q.limit as number) < 1 || (q.limit as number) > MAX_LIST_LIMIT)
    throw new TypeError(`list: limit must be an integer from 1 to ${MAX_LIST_LIMIT}`)
  if (q.cursor !== undefined && typeof q.cursor !== 'string') throw new TypeError('list: cursor must be a string')
}

export function checkAfter(after: unknown, limit: unknown): void {
  if (!Number.isSafeInteger(after) || (after as number) < -1)
    throw new TypeError('steps: after must be an integer ≥ -1')
  if (limit !== undefined && (!Number.isSafeInteger(limit) || (limit as number) < 0))
    throw new TypeError('steps: limit must be a non-negative integer')
}

/** The header's fields in wire order, whatever order a store gave them back in. */
export function headerOf(h: InteractionHeader): InteractionHeader {
  return {
    id: h.id,
    parentId: h.parentId,
    conversationId: h.conversationId,
    agentId: h.agentId,
    userId: h.userId,
    model: h.model,
    status: h.status,
    background: h.background,
    store: h.store,
    finalText: h.finalText,
    usage: h.usage,
    errorMessage: h.errorMessage,
    createdAt: h.createdAt,
    updatedAt: h.updatedAt
  }
}

export function stepOf(s: InteractionStep): InteractionStep {
  return {
    seq: s.seq,
    type: s.type,
    text: s.text,
    toolName: s.toolName,
    data: s.data,
    usage: s.usage,
    createdAt: s.createdAt
  }
}

/** The record in wire order: `steps` sits between `store` and `finalText`. */
export function interactionOf(h: InteractionHeader, steps: InteractionStep[]): Interaction {
  const { finalText, usage, errorMessage, createdAt, updatedAt, ...head } = headerOf(h)
  return { ...head, steps, finalText, usage, errorMessage, createdAt, updatedAt }
}

/** The header and terminal step `start()` writes for a run left unfinished by a dead process. */
export function interrupted(
  h: InteractionHeader,
  nextSeq: number,
  now = new Date().toISOString(),
  message = INTERRUPTED_MESSAGE
): { header: InteractionHeader; step: InteractionStep } {
  return {
    header: { ...headerOf(h), status: 'FAILED', errorMessage: message, updatedAt: now },
    step: {
      seq: nextSeq,
      type: 'error',
      text: message,
      toolName: null,
      data: { code: 'interrupted', recoverable: false },
      usage: null,
      createdAt: now
    }
  }
}

export const isLive = (status: InteractionStatus) => status === 'RUNNING' || status === 'CREATED'
