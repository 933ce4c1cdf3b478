/**
 * The AG-UI endpoint: `POST {agentAguiPath(agent)}` with a `RunAgentInput` body answers one
 * governed turn as a `text/event-stream` of AG-UI events. The client owns the conversation (it
 * sends the whole history each run); `threadId` is the turn's conversation id. A client that
 * goes away cancels the turn.
 */
import type { Platform } from '../platform.js'
import { PlatformError, type Context } from '../http/index.js'
import type { RegisteredAgent } from '../plugins/index.js'
import { AGENT_BASE, agentAguiPath } from './agent-paths.js'
import type { AiService } from './ai-service.js'
import { AguiRun } from './agui-events.js'
import { parseAguiInput, type AguiRunInput } from './agui-input.js'

const PATTERN = `${AGENT_BASE}/{name}/agui`
/** Paths the pattern route answers: an agent whose endpoint puts its AG-UI path there needs no route of its own. */
const UNDER_PATTERN = new RegExp(`^${AGENT_BASE}/[^/]+/agui$`)

export interface AguiEndpoint {
  /** The path an agent's AG-UI endpoint is served at, or undefined when it is not served. */
  pathOf(agent: RegisteredAgent): string | undefined
}

export function installAgui(platform: Platform, ai: AiService): AguiEndpoint {
  const { http, config, logger } = platform
  // AG-UI path -> agent name, rebuilt when plugins change so a request never walks the registry
  let index: Map<string, RegisteredAgent> | undefined
  const agents = (): Map<string, RegisteredAgent> =>
    (index ??= new Map(platform.plugins.agents().map((a) => [agentAguiPath(a), a])))
  const mounted = new Set<string>()

  const handle = (ctx: Context, path: string): void => {
    const principal = platform.principals.resolve(ctx)
    if (principal === null && config.get('platform.ai.endpoint.auth') === 'required')
      throw new PlatformError('AGENT_AUTH_REQUIRED', { path })
    const agent = agents().get(path)
    if (agent === undefined) throw new PlatformError('AGENT_NOT_FOUND', { agent: path })
    const input = parseAguiInput(ctx.body)
    // gone while its body was read: nothing to stream to, no turn to run
    if (ctx.aborted) return
    void run(ctx, agent.name, input, principal?.name).catch((err: unknown) => {
      logger.error({ err, agent: agent.name, route: ctx.route }, 'AG-UI run failed')
    })
  }

  async function run(ctx: Context, agent: string, input: AguiRunInput, userId: string | undefined): Promise<void> {
    const stream = ctx.sse()
    const cancel = new AbortController()
    stream.onClose(() => cancel.abort())
    const session = ai.sessions.start(agent, 'agui')
    ai.sessions.touch(session.sessionId)
    const out = new AguiRun(input.threadId, input.runId, input.state, (e) => {
      stream.send({ data: JSON.stringify(e) })
    })
    try {
      out.start()
      const turn = ai.runTurn(
        {
          agent,
          message: input.message,
          history: input.history,
          clientTools: input.tools,
          continuation: input.continuation,
          conversationId: input.threadId,
          sessionId: session.sessionId,
          ...(userId !== undefined ? { userId } : {}),
          metadata: { agui: { runId: input.runId, context: input.context } }
        },
        cancel.signal
      )
      for await (const e of turn) out.event(e)
      out.fail('the turn ended without a result')
    } finally {
      ai.sessions.end(session.sessionId)
      stream.close()
    }
  }

  http.post(PATTERN, (ctx) => {
    handle(ctx, `${AGENT_BASE}/${ctx.params.name}/agui`)
  })
  // an agent whose `endpoint` names its own path gets its AG-UI route there, mounted as it appears
  const mountCustom = (): void => {
    for (const a of platform.plugins.agents()) {
      const p = agentAguiPath(a)
      if (UNDER_PATTERN.test(p) || mounted.has(p)) continue
      if (/[{}:*?#]/.test(p)) {
        logger.warn({ agent: a.name, path: p }, `agent '${a.name}': AG-UI path ${p} is not a plain path; not served`)
        continue
      }
      try {
        http.post(p, (ctx) => {
          handle(ctx, p)
        })
        mounted.add(p)
      } catch (err) {
        logger.warn({ err, agent: a.name, path: p }, `agent '${a.name}': AG-UI path ${p} is taken; not served`)
      }
    }
  }
  mountCustom()
  platform.bus.on('PluginsChanged', () => {
    index = undefined
    mountCustom()
  })
  return {
    pathOf: (agent) => {
      const p = agentAguiPath(agent)
      return agents().get(p)?.name === agent.name && (UNDER_PATTERN.test(p) || mounted.has(p)) ? p : undefined
    }
  }
}
