/**
 * `platform.mcp.servers`: what the operator wrote, checked beyond its JSON Schema (names, one
 * transport each) and completed with the bearer token from the environment.
 */
import { PlatformError } from '../contracts/index.js'
import type { ConfigKeys } from '../config/index.js'
import { MCP_ERRORS } from './errors.js'

/** Short enough for a tool name prefix, and no `.`: the first `.` of `<name>.<tool>` ends the server name. */
const SERVER_NAME = /^[a-z][a-z0-9-]{0,31}$/
const DEFAULT_TIMEOUT_MS = 30_000

export interface ExternalServerConfig {
  name: string
  transport:
    | { kind: 'http'; url: URL; token?: string }
    | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  /** The tools taken from the server; undefined: all of them. */
  allow: ReadonlySet<string> | undefined
  timeoutMs: number
  expose: boolean
}

/** The environment variable that holds server `name`'s bearer token. */
export function tokenVariable(name: string): string {
  return `MCP_SERVER_${name.toUpperCase().replace(/-/g, '_')}_TOKEN`
}

const refuse = (server: string, detail: string): PlatformError =>
  new PlatformError(MCP_ERRORS.MCP_SERVER_CONFIG, { server, detail })

/** Every configured server, or a refusal naming the first wrong entry (nothing starts half-configured). */
export function externalServers(
  value: ConfigKeys['platform.mcp.servers'],
  env: Readonly<Record<string, string | undefined>>
): ExternalServerConfig[] {
  const out: ExternalServerConfig[] = []
  for (const [name, s] of Object.entries(value)) {
    if (!SERVER_NAME.test(name))
      throw refuse(
        name,
        'a server name is 1 to 32 lower-case letters, digits or -, starting with a letter (its tools are named <name>.<tool>)'
      )
    if ((s.url === undefined) === (s.command === undefined))
      throw refuse(name, 'set exactly one of url (Streamable HTTP or SSE) and command (a stdio child process)')
    const token = env[tokenVariable(name)]
    let transport: ExternalServerConfig['transport']
    if (s.url !== undefined) {
      if (s.args !== undefined || s.env !== undefined)
        throw refuse(name, 'args and env belong to a stdio server (command); this one has a url')
      let url: URL
      try {
        url = new URL(s.url)
      } catch {
        throw refuse(name, `url ${JSON.stringify(s.url)} is not a URL`)
      }
      transport = { kind: 'http', url, ...(token !== undefined && token !== '' ? { token } : {}) }
    } else {
      // a stdio child gets its token the way stdio servers read credentials: in its environment
      transport = { kind: 'stdio', command: s.command!, args: [...(s.args ?? [])], env: { ...s.env } }
      if (token !== undefined && token !== '') transport.env[tokenVariable(name)] = token
    }
    out.push({
      name,
      transport,
      allow: s.tools === undefined ? undefined : new Set(s.tools),
      timeoutMs: s['timeout-ms'] ?? DEFAULT_TIMEOUT_MS,
      expose: s.expose === true
    })
  }
  return out
}
