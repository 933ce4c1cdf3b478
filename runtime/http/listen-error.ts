import { createServer } from 'node:net'

/**
 * The server could not bind: an operator error (port taken, address not on this host, port needs
 * privileges), not a bug. `code` is the socket error (`EADDRINUSE`, ...); the CLI prints `message`
 * as one line and exits 78.
 */
export class ListenError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly host: string,
    readonly port: number
  ) {
    super(message)
    this.name = 'ListenError'
  }
}

/**
 * uWS only says that listening failed; binding the same address once with Node (exclusively, then
 * released at once) tells why.
 */
export async function explainListenFailure(host: string, port: number): Promise<ListenError> {
  const code = await new Promise<string>((resolve) => {
    const probe = createServer()
    probe.once('error', (e: NodeJS.ErrnoException) => {
      resolve(e.code ?? 'UNKNOWN')
    })
    probe.listen({ host, port, exclusive: true }, () => {
      probe.close(() => {
        resolve('UNKNOWN')
      })
    })
  })
  const where = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
  switch (code) {
    case 'EADDRINUSE':
      return new ListenError(`port ${port} is in use`, code, host, port)
    case 'EADDRNOTAVAIL':
      return new ListenError(`cannot listen on ${where}: ${host} is not an address of this host`, code, host, port)
    case 'EACCES':
      return new ListenError(
        `cannot listen on ${where}: permission denied (ports below 1024 need privileges)`,
        code,
        host,
        port
      )
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ListenError(`cannot listen on ${where}: unknown host ${host}`, code, host, port)
    default:
      return new ListenError(`cannot listen on ${where} (${code})`, code, host, port)
  }
}
