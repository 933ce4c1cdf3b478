import type { FirstRunToken } from '../auth/index.js'
import type { Config } from '../config/index.js'

/** What the banner needs from the running platform. */
export interface StartFacts {
  url: string
  config: Config
  /** Names of the live agents, for the first request to try. */
  agents: readonly string[]
  /** The first-run admin token in use, if any (with the token itself on the start that made it). */
  firstRun?: FirstRunToken
}

const TOKEN_CREATE = 'node bin/platform.js token create --principal you --role admin --config platform.yaml'

/**
 * The block printed after the listening line: where the dashboard is, one request to try, where
 * the data and the plugins live, and each surface that is off with the key that turns it on.
 * A first start should say what to do next, not leave the user to find what is disabled.
 */
export function startBanner({ url, config, agents, firstRun }: StartFacts): string[] {
  const lines: string[] = []
  const row = (label: string, text: string) => lines.push(`  ${label.padEnd(11)}${text}`)
  // the only place the first-run token is ever written out: this line, on the terminal
  if (config.get('platform.admin.enabled'))
    row('dashboard', `${url}/platform/admin/${firstRun?.token === undefined ? '' : `#token=${firstRun.token}`}`)
  if (firstRun?.token !== undefined)
    row('', `(signs in with a new admin token, shown this once; only its SHA-256 is kept, in ${firstRun.file})`)
  else if (firstRun !== undefined)
    row(
      'token',
      `the first-run admin token of ${firstRun.file} (printed at the first start only); a new one: ${TOKEN_CREATE}`
    )
  const agent = agents.includes('demo') ? 'demo' : agents[0]
  if (agent !== undefined) row('try', `curl -N -X POST ${url}/platform/agent/${agent} -d 'What is a sandbox?'`)
  row('data', String(config.get('platform.data-dir')))
  row('plugins', config.get('platform.plugins.dirs').join(', '))
  const off: string[] = []
  if (config.get('platform.auth.tokens').length === 0) off.push(`no API token: ${TOKEN_CREATE}`)
  if (config.get('platform.admin.enabled') && !config.get('platform.admin.http-write-enabled'))
    off.push('admin writes (kill switch, workflows, evals): platform.admin.http-write-enabled: true')
  if (config.get('platform.interactions.enabled') && !config.get('platform.interactions.http-write-enabled'))
    off.push('interactions writes: platform.interactions.http-write-enabled: true')
  for (const [key, what] of [
    ['platform.mcp.enabled', 'MCP endpoint'],
    ['platform.a2a.enabled', 'A2A endpoints'],
    ['platform.interactions.enabled', 'interactions API'],
    ['platform.admin.enabled', 'admin and dashboard']
  ] as const)
    if (!config.get(key)) off.push(`${what}: ${key}: true`)
  for (const [i, o] of off.entries()) row(i === 0 ? 'off' : '', o)
  return lines
}
