import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { createParser } from 'eventsource-parser'
import { nameTarget } from '../mcp/index.js'

type Json = Record<string, unknown>
const META_VERSION = 'io.modelcontextprotocol/protocolVersion'
const ACCEPT = 'application/json, text/event-stream'

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** SEP-2243 header value: plain when printable ASCII without edge spaces, else `=?base64?…?=`. */
export function headerValue(v: string): string {
  return /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(v)
    ? v
    : `=?base64?${Buffer.from(v, 'utf8').toString('base64')}?=`
}

/** Reads `text/event-stream` and hands each event's data to `onData`. */
async function readSse(body: ReadableStream<Uint8Array>, onData: (data: string) => void): Promise<void> {
  const parser = createParser({ onEvent: (e) => e.data.trim() !== '' && onData(e.data) })
  const decoder = new TextDecoder()
  const reader = body.getReader()
  for (let r = await reader.read(); !r.done; r = await reader.read())
    parser.feed(decoder.decode(r.value, { stream: true }))
}

export interface BridgeOptions {
  url: string
  headers?: Record<string, string>
  input?: Readable
  output?: Writable
  log?: (s: string) => void
}

/**
 * `platform mcp-stdio --url <http url>`: a stdio MCP server for clients that speak only stdio, which
 * forwards every line to the platform's Streamable HTTP endpoint. Both dialects: the session
 * dialect's Mcp-Session-Id and MCP-Protocol-Version are carried, and its GET stream is relayed once
 * the session is initialized; stateless 2026-07-28 requests get the Mcp-Method, Mcp-Name and
 * Mcp-Param-* headers the HTTP transport requires (Mcp-Param-* from the tools/list results seen).
 */
export class StdioBridge {
  private sessionId: string | undefined
  private sessionVersion: string | undefined
  private initializing: Promise<void> | undefined
  private streamOpen = false
  private closed = false
  private readonly inflight = new Map<string | number, AbortController>()
  private readonly streamAbort = new AbortController()
  /** tool name → [argument, Mcp-Param header name] from `x-mcp-header` in the tool's inputSchema. */
  private readonly headerParams = new Map<string, [string, string][]>()
  private readonly out: Writable
  private readonly log: (s: string) => void

  constructor(private readonly opts: BridgeOptions) {
    this.out = opts.output ?? process.stdout
    this.log =
      opts.log ??
      ((s) => {
        process.stderr.write(`mcp-stdio: ${s}\n`)
      })
  }

  async run(): Promise<number> {
    const rl = createInterface({ input: this.opts.input ?? process.stdin, crlfDelay: Infinity })
    const work = new Set<Promise<void>>()
    for await (const line of rl) {
      if (line.trim() === '') continue
      const p = this.onLine(line).catch((err) => {
        this.log(String((err as Error).stack ?? err))
      })
      work.add(p)
      void p.finally(() => work.delete(p))
    }
    await Promise.allSettled([...work])
    await this.close()
    return 0
  }

  private write(msg: unknown): void {
    this.out.write(JSON.stringify(msg) + '\n')
  }

  private async onLine(line: string): Promise<void> {
    let msg: unknown
    try {
      msg = JSON.parse(line)
    } catch (err) {
      this.write({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: `Parse error: ${(err as Error).message}` }
      })
      return
    }
    const m = isObject(msg) ? msg : {}
    const method = typeof m.method === 'string' ? m.method : undefined
    const params = isObject(m.params) ? m.params : undefined
    const id = m.id as string | number | undefined
    if (method === 'notifications/cancelled' && params !== undefined) {
      const rid = params.requestId as string | number
      this.inflight.get(rid)?.abort()
    }
    const modern =
      method === 'server/discover' || (isObject(params?._meta) && typeof params._meta[META_VERSION] === 'string')
    if (method === 'initialize') {
      let done!: () => void
      this.initializing = new Promise((resolve) => {
        done = resolve
      })
      try {
        await this.post(m, method, params, id, false)
      } finally {
        done()
        this.initializing = undefined
      }
      return
    }
    if (!modern && this.initializing !== undefined) await this.initializing
    await this.post(m, method, params, id, modern)
    if (method === 'notifications/initialized') void this.openStream()
  }

  private headersFor(method: string | undefined, params: Json | undefined, modern: boolean): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json', accept: ACCEPT, ...this.opts.headers }
    if (modern) {
      const v = isObject(params?._meta) ? params._meta[META_VERSION] : undefined
      if (typeof v === 'string') h['mcp-protocol-version'] = v
      if (method !== undefined) h['mcp-method'] = method
      const target = method !== undefined ? nameTarget(method, params) : undefined
      if (typeof target === 'string') h['mcp-name'] = headerValue(target)
      if (method === 'tools/call' && typeof params?.name === 'string' && isObject(params.arguments)) {
        for (const [prop, header] of this.headerParams.get(params.name) ?? []) {
          const val = params.arguments[prop]
          if (val !== undefined && val !== null) h[`mcp-param-${header.toLowerCase()}`] = headerValue(String(val))
        }
      }
    } else {
      if (this.sessionId !== undefined) h['mcp-session-id'] = this.sessionId
      if (this.sessionVersion !== undefined) h['mcp-protocol-version'] = this.sessionVersion
    }
    return h
  }

  /** Learns `x-mcp-header` arguments from tools/list results, and the session from initialize. */
  private observe(msg: unknown, method: string | undefined): void {
    if (!isObject(msg) || !isObject(msg.result)) return
    const r = msg.result
    if (method === 'initialize' && typeof r.protocolVersion === 'string') this.sessionVersion = r.protocolVersion
    if (method === 'tools/list' && Array.isArray(r.tools)) {
      for (const t of r.tools) {
        if (
          !isObject(t) ||
          typeof t.name !== 'string' ||
          !isObject(t.inputSchema) ||
          !isObject(t.inputSchema.properties)
        )
          continue
        const pairs: [string, string][] = []
        for (const [prop, s] of Object.entries(t.inputSchema.properties))
          if (isObject(s) && typeof s['x-mcp-header'] === 'string') pairs.push([prop, s['x-mcp-header']])
        if (pairs.length > 0) this.headerParams.set(t.name, pairs)
        else this.headerParams.delete(t.name)
      }
    }
  }

  private async post(
    msg: Json,
    method: string | undefined,
    params: Json | undefined,
    id: string | number | undefined,
    modern: boolean
  ): Promise<void> {
    const ac = new AbortController()
    if (id !== undefined && method !== undefined) this.inflight.set(id, ac)
    try {
      const res = await fetch(this.opts.url, {
        method: 'POST',
        headers: this.headersFor(method, params, modern),
        body: JSON.stringify(msg),
        signal: ac.signal
      })
      const sid = res.headers.get('mcp-session-id')
      if (sid !== null && method === 'initialize') this.sessionId = sid
      const type = res.headers.get('content-type') ?? ''
      if (res.status === 202 || res.status === 204) {
        await res.body?.cancel()
        return
      }
      if (type.includes('text/event-stream') && res.body !== null) {
        await readSse(res.body, (data) => {
          this.relay(data, method)
        })
        return
      }
      const text = await res.text()
      let body: unknown
      try {
        body = text === '' ? undefined : JSON.parse(text)
      } catch {
        body = undefined
      }
      if (isObject(body) && body.jsonrpc === '2.0') {
        // transport errors (401, 404 session, 413 …) may carry id null: give them the request's id
        if (body.error !== undefined && (body.id === null || body.id === undefined) && id !== undefined) body.id = id
        this.observe(body, method)
        if (id !== undefined || body.error === undefined) this.write(body)
        return
      }
      if (id !== undefined)
        this.write({
          jsonrpc: '2.0',
          id,
          error: {
            code: -32000,
            message: `HTTP ${res.status} from ${this.opts.url}${isObject(body) && typeof body.error === 'string' ? `: ${body.error}` : ''}`
          }
        })
    } catch (err) {
      if (ac.signal.aborted) return
      if (id !== undefined && method !== undefined)
        this.write({
          jsonrpc: '2.0',
          id,
          error: { code: -32000, message: `cannot reach ${this.opts.url}: ${(err as Error).message}` }
        })
      else this.log(`cannot forward a message: ${(err as Error).message}`)
    } finally {
      if (id !== undefined && this.inflight.get(id) === ac) this.inflight.delete(id)
    }
  }

  private relay(data: string, method: string | undefined): void {
    let msg: unknown
    try {
      msg = JSON.parse(data)
    } catch {
      this.log('dropped a non-JSON SSE event')
      return
    }
    this.observe(msg, method)
    this.write(msg)
  }

  /** The session's GET stream (list changes, server requests), reopened while the session lives. */
  private async openStream(): Promise<void> {
    if (this.streamOpen || this.sessionId === undefined) return
    this.streamOpen = true
    for (let attempt = 0; !this.closed && attempt < 5; attempt++) {
      try {
        const res = await fetch(this.opts.url, {
          method: 'GET',
          headers: {
            accept: 'text/event-stream',
            'mcp-session-id': this.sessionId,
            ...(this.sessionVersion !== undefined ? { 'mcp-protocol-version': this.sessionVersion } : {}),
            ...this.opts.headers
          },
          signal: this.streamAbort.signal
        })
        if (res.status !== 200 || res.body === null) {
          await res.body?.cancel()
          if (res.status === 405 || res.status === 404 || res.status === 409) break
          continue
        }
        attempt = 0
        await readSse(res.body, (data) => {
          this.relay(data, undefined)
        })
      } catch (err) {
        if (this.closed) break
        this.log(`notification stream: ${(err as Error).message}`)
      }
      if (!this.closed) await new Promise((resolve) => setTimeout(resolve, 250 * (attempt + 1)))
    }
    this.streamOpen = false
  }

  /** stdin ended: end the session (DELETE) so the server frees it at once. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.streamAbort.abort()
    for (const ac of this.inflight.values()) ac.abort()
    if (this.sessionId !== undefined) {
      try {
        await fetch(this.opts.url, {
          method: 'DELETE',
          headers: { 'mcp-session-id': this.sessionId, ...this.opts.headers }
        })
      } catch {
        /* server gone */
      }
    }
  }
}

/** Parses `--header 'Name: value'` flags. */
export function parseHeaders(flags: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const f of flags ?? []) {
    const i = f.indexOf(':')
    if (i <= 0) throw new Error(`--header expects 'Name: value', got '${f}'`)
    out[f.slice(0, i).trim().toLowerCase()] = f.slice(i + 1).trim()
  }
  return out
}
