/**
 * The one HTTP call both OpenAI-compatible adapters make: POST JSON with a deadline, read the
 * whole reply, and sort every failure into timeout, capacity or error without throwing anything
 * else. Replies are capped so a misbehaving server cannot make us buffer without bound.
 */
import { readCapped } from '../http/index.js'

export interface OpenAiEndpoint {
  /** Base URL including the version segment, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string
  model: string
  apiKey?: string | undefined
  timeoutMs: number
}

export type HttpOutcome =
  | { ok: true; status: number; body: unknown }
  | { ok: false; reason: 'timeout' | 'capacity' | 'error' | 'unparseable'; status: number; detail: string }

const MAX_REPLY_BYTES = 8 * 1024 * 1024

export async function postJson(
  ep: OpenAiEndpoint,
  path: string,
  payload: unknown,
  timeoutMs: number
): Promise<HttpOutcome> {
  const url = ep.baseUrl.replace(/\/+$/, '') + path
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (ep.apiKey !== undefined && ep.apiKey !== '') headers.authorization = `Bearer ${ep.apiKey}`
  const signal = AbortSignal.timeout(Math.max(1, timeoutMs))
  let res: Response
  let text: string
  try {
    res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(payload), signal })
    text = await readCapped(res, MAX_REPLY_BYTES)
  } catch (err) {
    if (signal.aborted)
      return { ok: false, reason: 'timeout', status: 0, detail: `no reply from ${url} within ${timeoutMs} ms` }
    const e = err as Error & { cause?: { code?: string; message?: string } }
    return {
      ok: false,
      reason: 'error',
      status: 0,
      detail: `${url} unreachable: ${e.cause?.code ?? e.cause?.message ?? e.message}`
    }
  }
  if (res.status === 429 || res.status === 503)
    return {
      ok: false,
      reason: 'capacity',
      status: res.status,
      detail: `${url} answered ${res.status}${snippet(text)}`
    }
  if (res.status < 200 || res.status >= 300)
    return { ok: false, reason: 'error', status: res.status, detail: `${url} answered ${res.status}${snippet(text)}` }
  try {
    return { ok: true, status: res.status, body: JSON.parse(text) }
  } catch {
    return {
      ok: false,
      reason: 'unparseable',
      status: res.status,
      detail: `${url} replied with something that is not JSON${snippet(text)}`
    }
  }
}

function snippet(text: string): string {
  const t = text.trim()
  return t === '' ? '' : `: ${t.length > 200 ? t.slice(0, 200) + '…' : t}`
}
