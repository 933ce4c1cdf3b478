import { request } from 'node:http'
import WebSocket from 'ws'

export const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } }
}

export interface Reply {
  status: number
  sid: string | undefined
  body: any
}

/**
 * One HTTP request to an MCP endpoint from a chosen loopback source address (`from`, e.g.
 * 127.0.0.7), so a test can play clients at many addresses.
 */
export async function call(
  url: string,
  opts: { method?: string; body?: unknown; headers?: Record<string, string>; from?: string; sid?: string } = {}
): Promise<Reply> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...opts.headers
  }
  if (opts.sid !== undefined) headers['mcp-session-id'] = opts.sid
  return await new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: opts.method ?? 'POST',
        headers,
        agent: false,
        ...(opts.from !== undefined ? { localAddress: opts.from } : {})
      },
      (res) => {
        const sid = res.headers['mcp-session-id']
        const status = res.statusCode ?? 0
        // a GET stream that opened is proof enough: read no further
        if ((res.headers['content-type'] ?? '').includes('text/event-stream') && opts.method === 'GET') {
          res.destroy()
          resolve({ status, sid: typeof sid === 'string' ? sid : undefined, body: undefined })
          return
        }
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (text += c))
        res.on('end', () => {
          let body: any
          if (text.startsWith('event:') || text.startsWith('id:')) {
            const data = text.split('\n').filter((l) => l.startsWith('data: '))
            body = data.length === 0 ? undefined : JSON.parse(data[data.length - 1]!.slice(6))
          } else body = text === '' ? undefined : JSON.parse(text)
          resolve({ status, sid: typeof sid === 'string' ? sid : undefined, body })
        })
        res.on('error', reject)
      }
    )
    req.on('error', reject)
    if (opts.body !== undefined) req.end(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body))
    else req.end()
  })
}

/** initialize over HTTP; `params` replaces the default params. */
export async function initialize(
  url: string,
  opts: { headers?: Record<string, string>; from?: string; params?: Record<string, unknown> } = {}
): Promise<Reply> {
  return await call(url, { ...opts, body: opts.params === undefined ? INIT : { ...INIT, params: opts.params } })
}

let nextId = 100
/** A request on a session. */
export async function onSession(
  url: string,
  sid: string,
  method: string,
  params: Record<string, unknown> = {},
  opts: { headers?: Record<string, string>; from?: string } = {}
): Promise<Reply> {
  return await call(url, { ...opts, sid, body: { jsonrpc: '2.0', id: nextId++, method, params } })
}

/** A WebSocket MCP client from a chosen source address; `send` resolves with the next frame. */
export async function wsFrom(
  url: string,
  opts: { from?: string; headers?: Record<string, string> } = {}
): Promise<{ ws: WebSocket; send: (text: string) => Promise<any> }> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), {
    headers: opts.headers ?? {},
    ...(opts.from !== undefined ? { localAddress: opts.from } : {})
  })
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  return {
    ws,
    send: async (text) =>
      await new Promise((resolve, reject) => {
        ws.once('message', (d) => {
          resolve(JSON.parse(String(d)))
        })
        ws.once('close', () => {
          reject(new Error('socket closed'))
        })
        ws.send(text)
      })
  }
}

/** Closes a WebSocket and waits until it is gone. */
export async function closeWs(ws: WebSocket): Promise<void> {
  if (ws.readyState === WebSocket.CLOSED) return
  await new Promise((resolve) => {
    ws.once('close', resolve)
    ws.close()
  })
}
