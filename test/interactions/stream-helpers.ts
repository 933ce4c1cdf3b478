import WebSocket from 'ws'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { startInteractions } from './helpers.js'

export const STREAM = '/platform/interactions-stream'

/**
 * A served platform whose turns come from a fake OpenAI-compatible server streaming `deltas` text
 * deltas `intervalMs` apart (each at least `deltaBytes` long), each recorded as its own step (no coalescing).
 */
export async function startStreaming(
  deltas: number,
  intervalMs: number,
  overrides: Record<string, unknown> = {},
  deltaBytes = 0
): Promise<Awaited<ReturnType<typeof startInteractions>> & { model: OpenAiServer }> {
  const model = await new OpenAiServer().start()
  model.chat = () => ({
    stream: sseEvents([
      ...Array.from({ length: deltas }, (_, i) => deltaChunk({ content: `d${i} `.padEnd(deltaBytes) })),
      deltaChunk({}, 'stop')
    ]),
    intervalMs
  })
  const tp = await startInteractions({
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model',
    'platform.interactions.text-coalesce-ms': 0,
    'platform.interactions.max-steps': Math.max(1000, deltas + 10),
    ...overrides
  })
  const close = tp.close
  return {
    ...tp,
    model,
    close: async () => {
      await close()
      await model.close()
    }
  }
}

export interface Received {
  frames: any[]
  /** SSE `id:` of each frame (undefined where none). */
  ids: (string | undefined)[]
  closeCode?: number
  status?: number
  body?: any
}

/** Reads a whole WebSocket stream: every frame until the server closes, or the refusal. */
export function readWs(url: string, headers: Record<string, string> = {}): Promise<Received> {
  return new Promise((resolve, reject) => {
    const out: Received = { frames: [], ids: [] }
    const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers })
    ws.on('message', (d) => {
      out.frames.push(JSON.parse(String(d)))
      out.ids.push(undefined)
    })
    ws.on('close', (code) => {
      out.closeCode = code
      resolve(out)
    })
    ws.on('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (c) => (body += c))
      res.on('end', () => {
        out.status = res.statusCode
        out.body = JSON.parse(body)
        ws.terminate()
        resolve(out)
      })
    })
    ws.on('error', reject)
  })
}

/** Reads a whole SSE stream over fetch: every event until the server ends it, or the error answer. */
export async function readSse(url: string, headers: Record<string, string> = {}): Promise<Received> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } })
  const out: Received = { frames: [], ids: [], status: res.status }
  if (res.headers.get('content-type') !== 'text/event-stream') {
    out.body = await res.json()
    return out
  }
  const text = await res.text()
  for (const block of text.split('\n\n')) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
    if (data.length === 0) continue
    out.frames.push(JSON.parse(data.join('\n')))
    out.ids.push(/^id: (.*)$/m.exec(block)?.[1])
  }
  return out
}

/** The seqs of the step frames, in order. */
export const seqs = (r: Received): number[] =>
  r.frames.filter((f) => f.type === 'interaction-step').map((f) => f.step.seq)

export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)

export async function until(cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 10))
  }
}
