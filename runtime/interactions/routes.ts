/**
 * `/api/interactions`: the routes, status codes and messages docs/interactions.md lists. Writes
 * (create, continue, cancel, delete) pass the write gate first: the feature flag (403), then a
 * principal (401); then validation. Reads and writes see only the caller's own interactions, and
 * an id that is unknown or someone else's is the same 404.
 */
import type { Platform } from '../platform.js'
import { type Context } from '../http/index.js'
import { PlatformError, isPlatformError } from '../contracts/index.js'
import { fingerprint } from './idempotency.js'
import type { InteractionService } from './service.js'
import type { InteractionRequest } from './interaction-request.js'
import { INTERACTION_ID, MAX_LIST_LIMIT } from './store-input.js'
import type { IdempotencyClaim, Interaction } from './types.js'
import { resumePoint, type InteractionStreams } from './stream.js'
import { HTTP_ERRORS } from '../http/index.js'
import { INTERACTION_ERRORS } from './errors.js'
import { parseWebhook } from './webhook.js'

const BASE = '/api/interactions'
export const LIST_DEFAULT_LIMIT = 50
// keys the platform sets: the tool-call gate's would make a turn pass for a tool call (scope admits
// those), and `roles` comes from the caller's credentials (an authorization policy reads it)
export const RESERVED_METADATA = ['action', 'tool_name', 'tool_args', 'tool_args_preview', 'tool_client', 'roles']
const BODY_KEYS = [
  'message',
  'previousInteractionId',
  'agentId',
  'model',
  'systemPrompt',
  'metadata',
  'background',
  'store',
  'webhook'
]

export function installRoutes(platform: Platform, service: InteractionService, streams: InteractionStreams): void {
  const { http, config, principals } = platform
  const reader = (ctx: Context): string => service.readerOf(principals.resolve(ctx)?.name)
  /** A create or continue of `owner` within its quota, else 429 with Retry-After (nothing started). */
  const admit = async (ctx: Context, owner: string): Promise<void> => {
    // the bytes the client sent, as the server received them (no second serialisation)
    const refused = await service.quota.take(owner, ctx.rawBody?.length ?? 0)
    if (refused === undefined) return
    ctx.setHeader('retry-after', String(refused.waitSeconds))
    throw new PlatformError(INTERACTION_ERRORS.INTERACTIONS_QUOTA, { over: refused.over })
  }
  /** The caller of a write and its roles, after the flag (re-read on every call) and the principal checks. */
  const writer = (ctx: Context): { name: string; roles: readonly string[] } => {
    if (!config.get('platform.interactions.http-write-enabled'))
      throw new PlatformError(INTERACTION_ERRORS.INTERACTIONS_WRITE_DISABLED)
    const principal = principals.resolve(ctx)
    const name = service.writerOf(principal?.name)
    if (name === undefined) throw new PlatformError(INTERACTION_ERRORS.INTERACTIONS_AUTH_REQUIRED)
    return { name, roles: principal?.roles ?? [] }
  }

  /** Create and continue: once per Idempotency-Key when the client sends one. */
  const start = async (
    ctx: Context,
    owner: string,
    route: string,
    run: (claim?: IdempotencyClaim) => Promise<Interaction>
  ): Promise<Interaction> => {
    const key = ctx.header('idempotency-key')
    if (key === undefined) return await run()
    const { interaction, replayed } = await service.idempotency.run(owner, key, fingerprint(route, ctx.body), run)
    if (replayed) ctx.setHeader('idempotent-replayed', 'true')
    return interaction
  }

  http.post(
    BASE,
    async (ctx) => {
      const { name: owner, roles } = writer(ctx)
      const req = { ...parseRequest(ctx.body), roles }
      if (req.previousInteractionId !== undefined) checkId(req.previousInteractionId)
      await admit(ctx, owner)
      return await start(ctx, owner, 'create', (idempotency) => service.create(owner, { ...req, idempotency }))
    },
    { body: 'json', optionalBody: true, checkOrigin: true }
  )

  http.post(
    `${BASE}/{id}/continue`,
    async (ctx) => {
      const { name: owner, roles } = writer(ctx)
      const id = checkId(ctx.params.id)
      const req = { ...parseRequest(ctx.body), roles }
      await admit(ctx, owner)
      return await start(ctx, owner, `continue:${id}`, (idempotency) =>
        service.continue(owner, id, { ...req, idempotency })
      )
    },
    { body: 'json', optionalBody: true, checkOrigin: true }
  )

  http.get(
    `${BASE}/{id}`,
    async (ctx) => {
      const id = checkId(ctx.params.id)
      // OpenAI-style clients ask the read itself for the live stream
      if (ctx.query.get('stream') === 'true')
        return await streams.sse(ctx, id, resumePoint(ctx.query, ctx.header('last-event-id')))
      const owner = reader(ctx)
      const found = await service.get(owner, id)
      if (found === undefined) throw new PlatformError(INTERACTION_ERRORS.INTERACTION_NOT_FOUND, { id })
      return found
    },
    { checkOrigin: true }
  )

  http.get(
    BASE,
    async (ctx) => {
      const owner = reader(ctx)
      const q = ctx.query
      const limit = parseLimit(q.get('limit'))
      const conversationId = q.get('conversationId') ?? undefined
      if (conversationId !== undefined && !/^[\x21-\x7e]{1,256}$/.test(conversationId))
        throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, {
          name: 'conversationId',
          detail: 'expected 1 to 256 visible characters'
        })
      const cursor = q.get('cursor') ?? undefined
      const page = await service
        .list(owner, {
          limit,
          ...(conversationId !== undefined ? { conversationId } : {}),
          ...(cursor !== undefined ? { cursor } : {})
        })
        .catch((err: unknown) => {
          if (isPlatformError(err, INTERACTION_ERRORS.INTERACTION_CURSOR_INVALID))
            throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, {
              name: 'cursor',
              detail: 'pass the X-Next-Cursor of the previous page unchanged'
            })
          throw err
        })
      if (page.nextCursor !== undefined) {
        // the body stays a plain array, as clients without paging expect; the next page travels in headers
        const next = new URLSearchParams({ limit: String(limit), cursor: page.nextCursor })
        if (conversationId !== undefined) next.set('conversationId', conversationId)
        ctx.setHeader('x-next-cursor', page.nextCursor)
        ctx.setHeader('link', `<${BASE}?${next.toString()}>; rel="next"`)
      }
      return page.items
    },
    { checkOrigin: true }
  )

  http.post(
    `${BASE}/{id}/cancel`,
    async (ctx) => {
      const owner = writer(ctx).name
      const id = checkId(ctx.params.id)
      if (!(await service.cancel(owner, id))) throw new PlatformError(INTERACTION_ERRORS.INTERACTION_NOT_FOUND, { id })
      return { status: 'cancel requested' }
    },
    { checkOrigin: true }
  )

  http.delete(
    `${BASE}/{id}`,
    async (ctx) => {
      const owner = writer(ctx).name
      const id = checkId(ctx.params.id)
      if (!(await service.delete(owner, id))) throw new PlatformError(INTERACTION_ERRORS.INTERACTION_NOT_FOUND, { id })
      return { deleted: id }
    },
    { checkOrigin: true }
  )
}

function checkId(id: string | undefined): string {
  if (id === undefined || !INTERACTION_ID.test(id)) throw new PlatformError(INTERACTION_ERRORS.INTERACTION_ID_INVALID)
  return id
}

function parseLimit(raw: string | null): number {
  if (raw === null) return LIST_DEFAULT_LIMIT
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1)
    throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, { name: 'limit', detail: 'expected a positive integer' })
  return Math.min(Number(raw), MAX_LIST_LIMIT)
}

/** The create/continue body: the known keys only, each of its type; null counts as absent. */
export function parseRequest(body: unknown): InteractionRequest {
  if (body === undefined || body === null) throw new PlatformError(INTERACTION_ERRORS.INTERACTION_MESSAGE_MISSING)
  if (typeof body !== 'object' || Array.isArray(body))
    throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: 'expected a JSON object' })
  const b = body as Record<string, unknown>
  for (const k of Object.keys(b))
    if (!BODY_KEYS.includes(k))
      throw new PlatformError(HTTP_ERRORS.INVALID_BODY, {
        detail: `unknown key '${k}'; the keys are ${BODY_KEYS.join(', ')}`
      })
  if (typeof b.message !== 'string' || b.message.trim() === '')
    throw new PlatformError(INTERACTION_ERRORS.INTERACTION_MESSAGE_MISSING)
  const req: InteractionRequest = {
    message: b.message,
    background: flag(b, 'background', false),
    store: flag(b, 'store', true)
  }
  for (const k of ['previousInteractionId', 'agentId', 'model', 'systemPrompt'] as const) {
    const v = b[k]
    if (v === undefined || v === null) continue
    if (typeof v !== 'string' || (k !== 'systemPrompt' && v === ''))
      throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: `'${k}' must be a non-empty string` })
    req[k] = v
  }
  const metadata = b.metadata
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== 'object' || Array.isArray(metadata))
      throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: "'metadata' must be an object" })
    for (const k of RESERVED_METADATA)
      if (Object.hasOwn(metadata, k))
        throw new PlatformError(HTTP_ERRORS.INVALID_BODY, {
          detail: `'metadata.${k}' is reserved for the platform's own requests`
        })
    req.metadata = metadata as Record<string, unknown>
  }
  const webhook = parseWebhook(b.webhook)
  if (webhook !== undefined) req.webhook = webhook
  return req
}

function flag(b: Record<string, unknown>, key: string, absent: boolean): boolean {
  const v = b[key]
  if (v === undefined || v === null) return absent
  if (typeof v !== 'boolean')
    throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: `'${key}' must be true or false` })
  return v
}
