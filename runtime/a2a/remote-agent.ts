/**
 * A fleet agent that lives on another server, called over A2A: the shape of the fleet's
 * AgentTransport (kind `a2a`), so the dispatcher adds its journal, retries and gates around it.
 * Where a remote agent is: `AGENT_<NAME>_URL` in the environment, else `platform.a2a.remote-agents`;
 * the bearer token it wants, if any: `AGENT_<NAME>_TOKEN` (a secret, so never in the config file).
 */
import type { AiCancelSignal } from '../ai/index.js'
import { callMessage, type AgentCall, type AgentResult } from '../contracts/index.js'
import type { A2aClient } from './a2a-client.js'

export class A2aAgentTransport {
  readonly kind = 'a2a' as const
  private client: Promise<A2aClient> | undefined

  constructor(
    readonly url: string,
    private readonly opts: { token?: string; timeoutMs?: number } = {}
  ) {
    if (!/^https?:\/\//.test(url)) throw new TypeError(`A2A endpoint must be an http(s) URL, got '${url}'`)
  }

  /**
   * The A2A SDK loads with the first call to a remote agent: its module graph costs every platform
   * start a few hundred milliseconds of CPU, and most platforms call no remote agent.
   */
  private connect(): Promise<A2aClient> {
    return (this.client ??= import('./a2a-client.js').then(
      ({ A2aClient }) => new A2aClient({ url: this.url, ...this.opts })
    ))
  }

  /** Never throws: a failure is a result with `success: false`. */
  async call(call: AgentCall, ctx: { signal?: AiCancelSignal }): Promise<AgentResult> {
    const started = performance.now()
    const result = (success: boolean, text: string, metadata: Record<string, unknown> = {}): AgentResult => ({
      agentName: call.agent,
      skillId: call.skill,
      text,
      metadata: { transport: 'a2a', url: this.url, ...metadata },
      durationMs: Math.round(performance.now() - started),
      success
    })
    const ac = new AbortController()
    const onAbort = (): void => ac.abort()
    if (ctx.signal?.aborted === true) ac.abort()
    ctx.signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const client = await this.connect()
      const out = await client.send(callMessage(call), { skillId: call.skill, args: call.args }, ac.signal)
      const meta = { taskId: out.taskId, contextId: out.contextId, state: out.state }
      if (out.state === 'TASK_STATE_COMPLETED') return result(true, out.text, meta)
      return result(false, out.text !== '' ? out.text : `remote task ended ${out.state}`, meta)
    } catch (err) {
      return result(false, (err as Error).message)
    } finally {
      ctx.signal?.removeEventListener('abort', onAbort)
    }
  }
}

/** The environment variable that names a remote agent's URL: `AGENT_<NAME>_URL`, non-alphanumerics as `_`. */
export function remoteAgentEnvName(agent: string, what: 'URL' | 'TOKEN' = 'URL'): string {
  return `AGENT_${agent.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_${what}`
}

/** Where a remote agent is served, or undefined when it is not configured as remote. */
export function remoteAgentUrl(
  agent: string,
  env: Readonly<Record<string, string | undefined>>,
  configured: Readonly<Record<string, string>>
): string | undefined {
  const fromEnv = env[remoteAgentEnvName(agent)]
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv
  return configured[agent]
}

/**
 * The remote agents this platform can reach over A2A, looked up by name as dispatches need them
 * (one transport per agent, kept); undefined for an agent no URL names.
 */
export function remoteAgents(
  configured: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>> = process.env
): (agent: string) => A2aAgentTransport | undefined {
  const made = new Map<string, A2aAgentTransport>()
  return (agent) => {
    const url = remoteAgentUrl(agent, env, configured)
    if (url === undefined) return undefined
    let t = made.get(agent)
    if (t === undefined || t.url !== url) {
      const token = env[remoteAgentEnvName(agent, 'TOKEN')]
      t = new A2aAgentTransport(url, token !== undefined && token !== '' ? { token } : {})
      made.set(agent, t)
    }
    return t
  }
}
