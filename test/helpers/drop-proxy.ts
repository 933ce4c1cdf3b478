import { createConnection, createServer, type Socket } from 'node:net'

export interface DropProxy {
  url: string
  /** Points the proxy at another backend port (a restarted server). */
  retarget(port: number): void
  /** Cuts every open connection at once, mid-frame if need be, as a network failure would. */
  dropAll(): number
  /** Connections accepted so far. */
  readonly accepted: number
  close(): Promise<void>
}

/**
 * A TCP proxy on loopback between a client and the platform, so a test can cut the client's
 * connection at any point without the client or the server knowing it was a test.
 */
export async function startDropProxy(targetPort: number): Promise<DropProxy> {
  let target = targetPort
  let accepted = 0
  const pairs = new Set<[Socket, Socket]>()
  const server = createServer((client) => {
    accepted++
    const upstream = createConnection({ host: '127.0.0.1', port: target })
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}`,
    retarget(p) {
      target = p
    },
    dropAll() {
      const n = pairs.size
      for (const [a, b] of [...pairs]) {
        a.resetAndDestroy()
        b.destroy()
      }
      pairs.clear()
      return n
    },
    get accepted() {
      return accepted
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [a, b] of pairs) {
          a.destroy()
          b.destroy()
        }
        server.close(() => resolve())
      })
  }
}
