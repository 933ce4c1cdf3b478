import { installAreas } from '../../runtime/areas.js'
import { INTERACTIONS } from '../../runtime/interactions/index.js'
import { type Interaction } from '../../runtime/interactions/types.js'
import { type InteractionService } from '../../runtime/interactions/service.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'

export const ALICE = 'alice-token-0123456789'
export const BOB = 'bob-token-0123456789ab'

/** A served platform with every area, interactions writes on, and two principals. */
export async function startInteractions(
  overrides: Record<string, unknown> = {}
): Promise<TestPlatform & { service: InteractionService; api: Api }> {
  const tp = await startTestPlatform(
    {
      'platform.interactions.http-write-enabled': true,
      // text is flushed only by the next step or the end, so step lists do not depend on machine load
      'platform.interactions.text-coalesce-ms': 60_000,
      'platform.auth.tokens': [
        { token: ALICE, principal: 'alice' },
        { token: BOB, principal: 'bob' }
      ],
      ...overrides
    },
    { install: installAreas }
  )
  return { ...tp, service: tp.platform.area(INTERACTIONS), api: new Api(tp.url) }
}

/** An interaction, or the error body when the status says so. */
export type Answer = Interaction & { error?: string; code?: string; hint?: string }

export interface Reply<T = any> {
  status: number
  body: T
  headers: Headers
}

/** The REST routes over real sockets, as a given token (none: anonymous). */
export class Api {
  constructor(readonly url: string) {}

  async call<T = any>(
    method: string,
    path: string,
    opts: { token?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {}
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.token !== undefined && opts.token !== null) headers.authorization = `Bearer ${opts.token}`
    let body: string | undefined = opts.raw
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body)
      headers['content-type'] = 'application/json'
    }
    const res = await fetch(this.url + path, { method, headers, ...(body !== undefined ? { body } : {}) })
    const text = await res.text()
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers }
  }

  create(body: unknown, token: string | null = ALICE, headers?: Record<string, string>): Promise<Reply<Answer>> {
    return this.call('POST', '/api/interactions', { token, body, ...(headers ? { headers } : {}) })
  }

  get(id: string, token: string | null = ALICE): Promise<Reply<Answer>> {
    return this.call('GET', `/api/interactions/${id}`, { token })
  }

  /** Polls until the interaction is terminal (bounded). */
  async settled(id: string, token: string = ALICE, ms = 20_000): Promise<Interaction> {
    const until = Date.now() + ms
    for (;;) {
      const r = await this.get(id, token)
      if (r.status === 200 && ['COMPLETED', 'FAILED', 'CANCELLED'].includes(r.body.status)) return r.body
      if (Date.now() > until) throw new Error(`interaction ${id} still ${r.body?.status} after ${ms} ms`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}
