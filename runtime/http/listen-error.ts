import { createServer } from 'node:net'
import { PlatformError } from '../contracts/index.js'
import { HTTP_ERRORS } from './errors.js'

/**
 * The server could not bind: an operator error, not a bug. `socketCode` is the socket error
 * (`EADDRINUSE`, ...); the CLI prints the message as one line and exits 78.
 */
const listenFailed = (detail: string, socketCode: string, host: string, port: number): PlatformError =>
  new PlatformError(HTTP_ERRORS.LISTEN_FAILED, { detail, socketCode, host, port })

/**
 * uWS only says that listening failed; binding the same address once with Node (exclusively, then
 * released at once) tells why.
 */
export async function explainListenFailure(host: string, port: number): Promise<PlatformError> {
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
      return listenFailed(`port ${port} is in use`, code, host, port)
    case 'EADDRNOTAVAIL':
      return listenFailed(`cannot listen on ${where}: ${host} is not an address of this host`, code, host, port)
    case 'EACCES':
      return listenFailed(
        `cannot listen on ${where}: permission denied (ports below 1024 need privileges)`,
        code,
        host,
        port
      )
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return listenFailed(`cannot listen on ${where}: unknown host ${host}`, code, host, port)
    default:
      return listenFailed(`cannot listen on ${where} (${code})`, code, host, port)
  }
}
