/**
 * The AG-UI endpoint: `POST {agentAguiPath(agent)}` with a `RunAgentInput` body answers one
 * governed turn as a `text/event-stream` of AG-UI events. The client owns the conversation (it
 * sends the whole history each run); `threadId` is the turn's conversation id. A client that
 * goes away cancels the turn.
 */
import type { Platform } from '../platform.js'
import { type Context } from '../http/index.js'
import { PlatformError } from '../contracts/index.js'
import type { RegisteredAgent } from '../plugins/index.js'
import { AGENT_BASE } from './agent-paths.js'
import { AgentPathRoutes } from './agent-path-routes.js'
import type { AiService } from './ai-service.js'
import { AguiRun } from './agui-events.js'
import { parseAguiInput, type AguiRunInput } from './agui-input.js'
import { AI_ERRORS } from './errors.js'
import type { AddressCap } from '../transport/index.js'

const PATTERN = `${AGENT_BASE}/{name}/agui`

export interface AguiEndpoint {
  /** The path an agent's AG-UI endpoint is served at, or undefined when it is not served. */
  pathOf(agent: RegisteredAgent): string | undefined
}

export function installAgui(platform: Platform, ai: AiService, addressCap: AddressCap): AguiEndpoint {
  const { http, config, logger } = platform
  const paths = new AgentPathRoutes(platform, { suffix: 'agui', label: 'AG-UI' })

  const handle = (ctx: Context, path: string): void => {
    const principal = platform.principals.resolve(ctx)
    if (principal === null && config.get('platform.ai.endpoint.auth') === 'required')
      throw new PlatformError(AI_ERRORS.AGENT_AUTH_REQUIRED, { path })
    const agent = paths.agentAt(path)
    if (agent === undefined) throw new PlatformError(AI_ERRORS.AGENT_NOT_FOUND, { agent: path })
    const input = parseAguiInput(ctx.body)
    // gone while its body was read: nothing to stream to, no turn to run
    if (ctx.aborted) return
    const slot = addressCap.take(ctx.address(), 'AG-UI')
    void run(ctx, agent.name, input, principal?.name)
      .catch((err: unknown) => {
        logger.error({ err, agent: agent.name, route: ctx.route }, 'AG-UI run failed')
      })
      .finally(() => {
        slot.release()
      })
  }

  async function run(ctx: Context, agent: string, input: AguiRunInput, userId: string | undefined): Promise<void> {
    const stream = ctx.sse()
    const cancel = new AbortController()
    stream.onClose(() => cancel.abort())
    const sessionId = ai.sessions.open(agent, 'agui')
    ai.sessions.touch(sessionId)
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
          sessionId,
          ...(userId !== undefined ? { userId } : {}),
          // all of it is the client's: runId, context and forwardedProps are claims, never facts
          clientMetadata: { ...input.forwardedProps, agui: { runId: input.runId, context: input.context } }
        },
        cancel.signal
      )
      for await (const e of turn) out.event(e)
      out.fail('the turn ended without a result')
    } finally {
      ai.sessions.end(sessionId)
      stream.close()
    }
  }

  // a web page can reach it: the browser-origin rule applies
  const opts = { body: 'json', checkOrigin: true } as const
  http.post(
    PATTERN,
    (ctx) => {
      handle(ctx, `${AGENT_BASE}/${ctx.params.name}/agui`)
    },
    opts
  )
  // an agent whose `endpoint` names its own path gets its AG-UI route there, mounted as it appears
  paths.serveCustomPaths((p) => {
    http.post(
      p,
      (ctx) => {
        handle(ctx, p)
      },
      opts
    )
  })
  return { pathOf: (agent) => paths.pathOf(agent) }
}
