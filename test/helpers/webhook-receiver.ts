/**
 * A webhook receiver on loopback for the tests: records every POST (headers, body, the status it
 * answered) and answers what the test's `answer` says; `waitFor` resolves once a request matching
 * a predicate has arrived (no sleeps), and `verify` checks a Standard Webhooks signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

export const WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`

export interface Received {
  path: string
  headers: IncomingHttpHeaders
  body: string
  json: any
  /** What the receiver answered. */
  status: number
}

export interface Receiver {
  /** `http://127.0.0.1:<port>` (or `http://<host>:<port>` for the host given). */
  url: string
  port: number
  received: Received[]
  waitFor(pred: (r: Received) => boolean): Promise<Received>
  close(): Promise<void>
}

/** `answer` gives each request's status (and headers); 200 by default. */
export async function startReceiver(
  answer: (r: Omit<Received, 'status'>) => number | { status: number; headers?: Record<string, string> } = () => 200,
  host = '127.0.0.1'
): Promise<Receiver> {
  const received: Received[] = []
  const waiters: { pred: (r: Received) => boolean; resolve: (r: Received) => void }[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      let json: unknown
      try {
        json = JSON.parse(body)
      } catch {
        json = undefined
      }
      const partial = { path: req.url ?? '/', headers: req.headers, body, json }
      const a = answer(partial)
      const { status, headers } = typeof a === 'number' ? { status: a, headers: {} } : a
      const r: Received = { ...partial, status }
      received.push(r)
      res.writeHead(status, headers).end()
      for (const w of [...waiters])
        if (w.pred(r)) {
          waiters.splice(waiters.indexOf(w), 1)
          w.resolve(r)
        }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    received,
    waitFor: (pred) => {
      const found = received.find(pred)
      if (found !== undefined) return Promise.resolve(found)
      return new Promise((resolve) => waiters.push({ pred, resolve }))
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Whether a request carries a valid `webhook-signature` for `secret` (a `whsec_` key). */
export function verify(r: Pick<Received, 'headers' | 'body'>, secret = WEBHOOK_SECRET): boolean {
  const id = String(r.headers['webhook-id'])
  const ts = String(r.headers['webhook-timestamp'])
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest()
  return String(r.headers['webhook-signature'] ?? '')
    .split(' ')
    .some((sig) => {
      const [version, value] = sig.split(',')
      const got = Buffer.from(value ?? '', 'base64')
      return version === 'v1' && got.length === expected.length && timingSafeEqual(got, expected)
    })
}
