/** Shared by the A2A tests: a platform with the repository's plugins, the official client, raw JSON-RPC. */
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomUUID } from 'node:crypto'
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client'
import { Role, type StreamResponse } from '@a2a-js/sdk'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'

export const PLUGINS = join(fileURLToPath(new URL('../../', import.meta.url)), 'plugins')

export const start = (config: Record<string, unknown> = {}): Promise<TestPlatform> =>
  startTestPlatform({ 'platform.plugins.dirs': [PLUGINS], ...config }, { install: installAreas })

/** The official client for an agent, found through its Agent Card; `token` is sent as a bearer token. */
export async function clientFor(base: string, agent = 'demo', token?: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    if (token !== undefined) headers.set('authorization', `Bearer ${token}`)
    return fetch(input, { ...init, headers })
  }
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })]
    })
  )
  return await factory.createFromUrl(`${base}/platform/agent/${agent}/a2a`)
}

/** A SendMessageRequest with one text part. */
export function textMessage(text: string, extra: Record<string, unknown> = {}): any {
  return {
    message: {
      messageId: randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text } }],
      ...extra
    }
  }
}

/** The text of the parts of a (client-side) artifact or message. */
export function textOf(x: { parts: { content?: { $case: string; value: unknown } }[] } | undefined): string {
  return (x?.parts ?? []).map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('')
}

export async function collect(gen: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = []
  for await (const e of gen) out.push(e)
  return out
}

/** One raw JSON-RPC call; answers the HTTP status and the parsed body. */
export async function rpc(
  url: string,
  body: unknown,
  headers: Record<string, string> = {}
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}

export async function until(cond: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, 10))
  }
  return true
}
