import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the fake answers: JSON with a status, raw bytes, or nothing at all (the socket hangs). */
export type Reply = { status?: number; json: unknown } | { status?: number; raw: string } | { hang: true } | StreamReply

/**
 * A streamed reply: each entry is written as-is (use sseEvents to build them), then the response
 * ends, hangs with the socket open (`then: 'hang'`) or the socket is destroyed (`then: 'drop'`).
 */
export interface StreamReply {
  stream: string[]
  then?: 'end' | 'hang' | 'drop'
  intervalMs?: number
  /** Before writing entry `index`, waits for `until`: a run held in flight while the test acts. */
  pauseAt?: { index: number; until: Promise<void> }
}

/**
 * A real HTTP server on 127.0.0.1, port 0, speaking the OpenAI-compatible `/v1/embeddings` and
 * `/v1/chat/completions` routes, whose replies each test scripts. It records every request body.
 */
export class OpenAiServer {
  readonly calls: { path: string; body: any; auth: string | undefined }[] = []
  embeddings: (input: string[], body: any) => Reply = (input) => ({
    json: { data: input.map((_, i) => ({ index: i, embedding: [1, 0, 0] })) }
  })
  chat: (body: any) => Reply = () => chatReply('{"answer": false, "confidence": 0.95}')
  url = ''
  /** Streamed responses whose client went away before the stream ended (a cancelled request). */
  abandoned = 0
  private server: Server | undefined
  private readonly hanging = new Set<ServerResponse>()

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req, res)
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`
    return this
  }

  async close(): Promise<void> {
    for (const r of this.hanging) r.destroy()
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve())
  }

  /** Calls to one path since the last reset. */
  on(path: string): any[] {
    return this.calls.filter((c) => c.path === path).map((c) => c.body)
  }
  reset(): void {
    this.calls.length = 0
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    let body: any = null
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      /* recorded as null */
    }
    const path = (req.url ?? '').replace(/^\/v1/, '')
    this.calls.push({ path, body, auth: req.headers.authorization })
    let reply: Reply
    if (req.method === 'POST' && path === '/embeddings')
      reply = this.embeddings(Array.isArray(body?.input) ? body.input : [body?.input], body)
    else if (req.method === 'POST' && path === '/chat/completions') reply = this.chat(body)
    else reply = { status: 404, json: { error: { message: 'not found' } } }
    if ('hang' in reply) {
      this.hanging.add(res)
      return
    }
    if ('stream' in reply) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      res.on('close', () => {
        if (!res.writableEnded) this.abandoned++
      })
      for (const [i, part] of reply.stream.entries()) {
        if (reply.pauseAt?.index === i) await reply.pauseAt.until
        if (res.destroyed) return
        res.write(part)
        await new Promise((resolve) =>
          reply.intervalMs !== undefined ? setTimeout(resolve, reply.intervalMs) : setImmediate(resolve)
        )
        if (res.destroyed) return
      }
      if (reply.then === 'hang') this.hanging.add(res)
      else if (reply.then === 'drop') res.socket?.destroy()
      else res.end()
      return
    }
    const text = 'raw' in reply ? reply.raw : JSON.stringify(reply.json)
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' })
    res.end(text)
  }
}

/** A chat completion whose assistant message content is `content`. */
export function chatReply(content: string | null, extra: { refusal?: string; finish_reason?: string } = {}): Reply {
  return {
    json: {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      model: 'test-model',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, ...(extra.refusal !== undefined ? { refusal: extra.refusal } : {}) },
          finish_reason: extra.finish_reason ?? 'stop'
        }
      ]
    }
  }
}

/** Embeddings from a table (text to vector); unknown texts get `fallback`. */
export function tableEmbeddings(
  table: Record<string, number[]>,
  fallback: number[] = [0, 0, 1]
): (input: string[]) => Reply {
  return (input) => ({
    json: {
      object: 'list',
      data: input.map((t, i) => ({ object: 'embedding', index: i, embedding: table[t] ?? fallback }))
    }
  })
}

/** Server-sent events carrying each chunk as JSON (strings pass as-is), ended by `[DONE]` unless `done` is false. */
export function sseEvents(chunks: unknown[], done = true): string[] {
  const out = chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`)
  if (done) out.push('data: [DONE]\n\n')
  return out
}

/** One streamed chat-completion chunk with the given delta (and finish reason). */
export function deltaChunk(delta: Record<string, unknown>, finish: string | null = null): unknown {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }]
  }
}

/** The final usage chunk sent with `stream_options.include_usage`. */
export function usageChunk(prompt: number, completion: number, cached = 0): unknown {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    model: 'test-model',
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: cached }
    }
  }
}
