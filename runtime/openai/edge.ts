import type { Logger } from '../observability/index.js'
import { PlatformError, isWireError } from '../contracts/index.js'
import { parseJsonBody, HTTP_ERRORS, type Context, type HttpServer } from '../http/index.js'
import { openAiError } from './wire-error.js'

type Handler = (ctx: Context) => unknown

/**
 * Registers `/v1` routes so that every failure, including an unreadable or oversized body, is
 * answered once in OpenAI's error shape: the body is read raw and parsed here, not by the REST core.
 */
export class OpenAiEdge {
  constructor(
    private readonly http: HttpServer,
    private readonly logger: Logger,
    private readonly jsonMaxDepth: number
  ) {}

  get(path: string, handler: Handler): void {
    this.http.get(path, (ctx) => this.run(ctx, handler))
  }

  delete(path: string, handler: Handler): void {
    this.http.delete(path, (ctx) => this.run(ctx, handler))
  }

  /** A POST whose JSON body (optional when `optionalBody`) is in `ctx.body` for the handler. */
  post(path: string, handler: Handler, optionalBody = false): void {
    this.http.post(
      path,
      (ctx) =>
        this.run(ctx, (c) => {
          const raw = c.rawBody
          if (raw === undefined || raw.toString('utf8').trim() === '') {
            if (!optionalBody) throw new PlatformError(HTTP_ERRORS.EMPTY_BODY)
          } else c.body = parseJsonBody(raw, this.jsonMaxDepth)
          return handler(c)
        }),
      {
        body: 'raw',
        tooLarge: (limit) => ({
          body: JSON.stringify(openAiError(new PlatformError(HTTP_ERRORS.BODY_TOO_LARGE, { limit })).body),
          contentType: 'application/json'
        })
      }
    )
  }

  private async run(ctx: Context, handler: Handler): Promise<void> {
    try {
      const out = await handler(ctx)
      if (!ctx.done) ctx.json(out)
    } catch (err) {
      if (!isWireError(err))
        this.logger.error({ err, requestId: ctx.requestId, route: ctx.route }, 'OpenAI-compatible route failed')
      if (isWireError(err) && err.headers !== undefined)
        for (const [k, v] of Object.entries(err.headers)) ctx.setHeader(k, v)
      const { status, body } = openAiError(err)
      ctx.json(body, status)
    }
  }
}
