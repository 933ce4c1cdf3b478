/**
 * `/v1`: the OpenAI-compatible routes. Access follows the interactions API: writes (create,
 * cancel, delete) need `platform.interactions.http-write-enabled` (403) and a principal (401);
 * reads see only the caller's own responses, and anonymous readers own nothing.
 */
import type { Platform } from '../platform.js'
import { SseStream, type Context } from '../http/index.js'
import { PlatformError } from '../contracts/index.js'
import type { OpenAiApi } from './api.js'
import { OpenAiEdge } from './edge.js'
import { OPENAI_API_ERRORS } from './errors.js'
import { NO_ECHO, responseObject, type ResponseEcho } from './response-object.js'
import { ResponseEvents, type ResponseEvent } from './response-events.js'
import { parseResponseRequest, invalid } from './response-request.js'
import { followSteps } from './step-follower.js'
import { fingerprint, INTERACTION_ERRORS, type IdempotencyClaim, type Interaction } from '../interactions/index.js'
import { inputItemsPage } from './input-items.js'
import { inChatParams, parseChatRequest } from './chat-request.js'
import { ChatChunks, chatCompletion } from './chat-object.js'

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED'])

export function installOpenAiRoutes(platform: Platform, api: OpenAiApi): void {
  const { config, principals } = platform
  const edge = new OpenAiEdge(platform.http, platform.logger, config.get('platform.server.json-max-depth'))
  const service = api.interactions
  const reader = (ctx: Context): string => service.readerOf(principals.resolve(ctx)?.name)
  const writer = (ctx: Context): { owner: string; roles: readonly string[] } => {
    if (!config.get('platform.interactions.http-write-enabled'))
      throw new PlatformError(OPENAI_API_ERRORS.OPENAI_WRITE_DISABLED)
    const principal = principals.resolve(ctx)
    const owner = service.writerOf(principal?.name)
    if (owner === undefined) throw new PlatformError(OPENAI_API_ERRORS.OPENAI_AUTH_REQUIRED)
    return { owner, roles: principal?.roles ?? [] }
  }

  edge.get('/v1/models', () => ({ object: 'list', data: api.models() }))
  edge.get('/v1/models/{model}', (ctx) => api.model(api.agent(ctx.params.model ?? '')))

  /**
   * Within the owner's quota (one budget whichever API starts the run), once per
   * `Idempotency-Key`: a retry with the same body gets the first response, another body a 409.
   */
  const admit = async (
    ctx: Context,
    owner: string,
    route: string,
    run: (claim?: IdempotencyClaim) => Promise<Interaction>
  ): Promise<Interaction> => {
    const refused = await service.quota.take(owner, ctx.rawBody?.length ?? 0)
    if (refused !== undefined)
      throw new PlatformError(
        INTERACTION_ERRORS.INTERACTIONS_QUOTA,
        { over: refused.over },
        { headers: { 'retry-after': String(refused.waitSeconds) } }
      )
    const key = ctx.header('idempotency-key')
    if (key === undefined) return await run()
    const { interaction, replayed } = await service.idempotency.run(owner, key, fingerprint(route, ctx.body), run)
    if (replayed) ctx.setHeader('idempotent-replayed', 'true')
    return interaction
  }

  edge.post('/v1/responses', async (ctx) => {
    const { owner, roles } = writer(ctx)
    const req = parseResponseRequest(ctx.body)
    const checked = await api.check(owner, req)
    const created = await admit(ctx, owner, 'openai:responses', (claim) => api.create(owner, roles, checked, claim))
    const echo: ResponseEcho = {
      instructions: req.instructions,
      metadata: req.metadata,
      tools: req.toolsEcho,
      toolChoice: req.toolChoice,
      maxOutputTokens: req.maxOutputTokens ?? null
    }
    if (!req.stream) return responseObject(created, echo)
    await stream(ctx, owner, created.id, echo, -1)
    return undefined
  })

  edge.post('/v1/chat/completions', async (ctx) => {
    const { owner, roles } = writer(ctx)
    const req = parseChatRequest(ctx.body)
    const checked = await api.check(owner, req).catch((err: unknown) => {
      throw inChatParams(err)
    })
    const created = await admit(ctx, owner, 'openai:chat', (claim) => api.create(owner, roles, checked, claim))
    if (!req.stream) {
      const done = chatCompletion(created)
      if (done === undefined)
        throw new PlatformError(OPENAI_API_ERRORS.OPENAI_TURN_FAILED, { reason: created.errorMessage ?? 'unknown' })
      return done
    }
    let sse: SseStream | undefined
    let chunks: ChatChunks | undefined
    const followed = await followSteps(service, owner, created.id, {
      onStart: (first) => {
        sse = ctx.sse()
        chunks = new ChatChunks(first, req.includeUsage, (data) => sse?.send({ data }))
        chunks.begin()
      },
      onStep: (s) => chunks?.step(s),
      onEnd: (final) => {
        chunks?.finish(final)
        sse?.close()
      }
    })
    if (followed === undefined) throw new PlatformError(OPENAI_API_ERRORS.OPENAI_RESPONSE_NOT_FOUND, { id: created.id })
    sse?.onClose(followed.stop)
    return undefined
  })

  edge.get('/v1/responses/{id}/input_items', async (ctx) => {
    const found = await api.get(reader(ctx), ctx.params.id ?? '')
    return inputItemsPage(found, ctx.query)
  })

  edge.get('/v1/responses/{id}', async (ctx) => {
    const owner = reader(ctx)
    const id = ctx.params.id ?? ''
    if (ctx.query.get('stream') !== 'true') return responseObject(await api.get(owner, id), NO_ECHO)
    await api.get(owner, id)
    await stream(ctx, owner, id, NO_ECHO, startingAfter(ctx.query.get('starting_after')))
    return undefined
  })

  edge.post(
    '/v1/responses/{id}/cancel',
    async (ctx) => {
      const { owner } = writer(ctx)
      const id = ctx.params.id ?? ''
      const found = await api.get(owner, id)
      if (!found.background || TERMINAL.has(found.status) || !(await service.cancel(owner, id)))
        throw new PlatformError(OPENAI_API_ERRORS.OPENAI_NOT_CANCELLABLE, { id })
      return responseObject(await settled(owner, id), NO_ECHO)
    },
    true
  )

  edge.delete('/v1/responses/{id}', async (ctx) => {
    const { owner } = writer(ctx)
    const id = ctx.params.id ?? ''
    await api.get(owner, id)
    if (!(await service.delete(owner, id))) throw new PlatformError(OPENAI_API_ERRORS.OPENAI_RESPONSE_NOT_FOUND, { id })
    return { id, object: 'response', deleted: true }
  })

  /** The record once its run ended (a cancelled run ends at once; one that cannot be stopped runs on). */
  const settled = async (owner: string, id: string): Promise<Interaction> => {
    let done: (i: Interaction) => void = () => undefined
    const ended = new Promise<Interaction>((resolve) => (done = resolve))
    const followed = await followSteps(service, owner, id, {
      onStart: () => undefined,
      onStep: () => undefined,
      onEnd: done
    })
    if (followed === undefined) return await api.get(owner, id)
    // bounded: a run that ignores the cancel answers as it stands, still in progress
    const timer = new Promise<undefined>((resolve) => setTimeout(resolve, 2000, undefined).unref())
    const final = await Promise.race([ended, timer])
    followed.stop()
    return final ?? (await api.get(owner, id))
  }

  /**
   * Streams the response's events over SSE: rebuilt from the stored steps (those after
   * `after` are sent), then live until the terminal event, then the stream ends.
   */
  const stream = async (ctx: Context, owner: string, id: string, echo: ResponseEcho, after: number): Promise<void> => {
    let sse: SseStream | undefined
    let events: ResponseEvents | undefined
    const send = (e: ResponseEvent): void => {
      if (e.sequence_number > after) sse?.send({ event: e.type, data: JSON.stringify(e) })
    }
    const followed = await followSteps(service, owner, id, {
      onStart: (first) => {
        sse = ctx.sse()
        events = new ResponseEvents(first, echo, send)
        events.begin()
      },
      onStep: (s) => events?.step(s),
      onEnd: (final) => {
        events?.finish(final)
        sse?.close()
      }
    })
    if (followed === undefined) throw new PlatformError(OPENAI_API_ERRORS.OPENAI_RESPONSE_NOT_FOUND, { id })
    sse?.onClose(followed.stop)
  }
}

function startingAfter(raw: string | null): number {
  if (raw === null) return -1
  if (!/^\d{1,9}$/.test(raw)) throw invalid('starting_after', "'starting_after' must be a sequence number")
  return Number(raw)
}
