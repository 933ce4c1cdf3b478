import type { Area, Platform } from '../platform.js'
import { noteTurnEvent, type TurnTally } from './turn-outcome.js'
import type { AiService } from './ai-service.js'
import type { RegisteredAgent } from '../plugins/index.js'
import { DemoRuntime } from './demo-runtime.js'
import { getMcp } from '../mcp/index.js'
import { governanceOf } from '../governance/index.js'
import { agentInfo } from './agent-info.js'
import { AgentTools } from './agent-tools.js'
import { installAgui } from './agui-endpoint.js'
import { AI, AI_AGENT_PROTOCOLS, AI_AGENT_RUNS } from './key.js'
import {
  InMemoryConversationMemory,
  LmdbConversationMemory,
  type ConversationMemory,
  type MemoryKey
} from './memory.js'
import { OpenAiRuntime } from './openai-runtime.js'
import { PostgresConversationMemory } from './postgres-memory.js'
import { SessionScopedMemory } from './session-memory.js'
import { storeKindOf } from '../config/index.js'
import { isoNow } from '../contracts/index.js'
import { PluginRuntime } from './plugin-runtime.js'
import { RuntimeRegistry } from './runtime-registry.js'
import type { AiMessage } from './runtime.js'
import { AgentSessions } from './sessions.js'
import { runTurn, type TurnCounter, type TurnDeps } from './turn-pipeline.js'
import { AgentEndpoint } from './agent-endpoint.js'
import { AddressCap } from '../transport/index.js'
import { TurnMetrics } from './turn-metrics.js'
import { AI_CONFIG_KEYS } from './config-keys.js'
import { AI_ERRORS } from './errors.js'

const MEMORY_STORE_KEY = 'platform.ai.memory.store'

/**
 * The AI area: agent turns run through governance and scope, call tools over MCP and stream over
 * transport, hence its dependencies. It holds the runtimes and serves the agent chat and AG-UI endpoints.
 */
export const aiArea: Area = {
  name: 'ai',
  dependsOn: ['scope', 'governance', 'mcp', 'transport'],
  configKeys: AI_CONFIG_KEYS,
  errors: AI_ERRORS,
  async install(platform: Platform): Promise<void> {
    const memory = await memoryFromConfig(platform)
    const registry = registryFromConfig(platform)
    // not fatal: a plugin runtime may arrive later by hot reload, but the operator should know now
    const configured = platform.config.get('platform.ai.runtime')
    if (configured !== 'auto' && registry.get(configured) === undefined) {
      platform.logger.warn(
        { runtime: configured, known: registry.list().map((r) => r.name) },
        `platform.ai.runtime names '${configured}', which no built-in runtime or loaded plugin provides; no AI runtime is active until a plugin contributes it`
      )
    }
    const sessions = new AgentSessions(platform.bus)
    const agentTools = new AgentTools(platform, platform.config.get('platform.ai.agent-tools'))
    agentTools.warnUnknownAgents()
    const deps: TurnDeps = {
      platform,
      activeRuntime: () => registry.active(),
      runtime: (name) => registry.get(name),
      maxToolRounds: platform.config.get('platform.ai.max-tool-rounds'),
      agentTools: (agent) => agentTools.of(agent),
      feedback: { maxItems: platform.config.get('platform.ai.governance.feedback.max-items') },
      // read at use time: the fleet area, which adds it, installs after this one
      get runExtension() {
        return platform.extensions(AI_AGENT_RUNS)[0]
      }
    }
    let inFlight = 0
    // served by an area installed later (A2A), which adds where at AI_AGENT_PROTOCOLS; the last added wins
    const a2aPathOf = (agent: RegisteredAgent): string | undefined =>
      platform
        .extensions(AI_AGENT_PROTOCOLS)
        .findLast((s) => s.protocol === 'a2a')
        ?.pathOf(agent)
    const turnMetrics = new TurnMetrics(platform.metrics.registry)
    // one pass counts for the metrics and the TurnCompleted event, inside the turn's own generator
    const counter = (agentName: string): TurnCounter => {
      let started = 0
      const seen: TurnTally = { outcome: 'cancelled', input: 0, output: 0 }
      return {
        started() {
          inFlight++
          started = performance.now()
          turnMetrics.started()
        },
        event(e) {
          turnMetrics.event(e)
          noteTurnEvent(seen, e)
        },
        ended() {
          inFlight--
          const ms = performance.now() - started
          turnMetrics.ended(ms / 1000)
          // the charts of the dashboard and anything else that follows turns as they end
          platform.bus.publish({
            type: 'TurnCompleted',
            agentName,
            duration: Math.round(ms),
            outcome: seen.outcome,
            inputTokens: seen.input,
            outputTokens: seen.output,
            timestamp: isoNow()
          })
        }
      }
    }
    const service: AiService = {
      agentNames: () => platform.plugins.agents().map((a) => a.name),
      agents: () =>
        platform.plugins.agents().map((a) =>
          agentInfo(a, {
            mcp: (x) => getMcp(platform)?.agentEndpoint(x.name),
            agui: (x) => agui.pathOf(x),
            a2a: (x) => a2aPathOf(x)
          })
        ),
      runtimes: () => registry.list(),
      activeRuntime: () => registry.active(),
      runtime: (name) => registry.get(name),
      memory,
      sessions,
      runTurn: (request, signal, onText) =>
        runTurn(
          deps,
          request,
          signal,
          // the deltas a sink takes are no events: counted on their way there
          onText === undefined
            ? undefined
            : (delta) => {
                turnMetrics.text()
                return onText(delta)
              },
          counter(request.agent ?? '')
        ),
      recordsWritten: () => governanceOf(platform)?.decisionLog.written() ?? Promise.resolve(),
      inFlight: () => inFlight
    }
    // one count per address for every way of talking to an agent, whichever path it uses
    const addressCap = new AddressCap({
      max: platform.config.get('platform.ai.endpoint.max-connections-per-address'),
      key: 'platform.ai.endpoint.max-connections-per-address',
      what: 'agent connections'
    })
    const agui = installAgui(platform, service, addressCap)
    // connections outlive nothing at shutdown: their sessions end, announced like any other end
    platform.onClose(() => sessions.endAll())
    platform.provide(AI, service)
    new AgentEndpoint(platform, service, {
      auth: platform.config.get('platform.ai.endpoint.auth'),
      maxMessageBytes: platform.config.get('platform.ai.endpoint.max-message-bytes'),
      rate: {
        perSecond: platform.config.get('platform.ai.endpoint.max-messages-per-second'),
        burst: platform.config.get('platform.ai.endpoint.message-burst')
      },
      jsonMaxDepth: platform.config.get('platform.server.json-max-depth'),
      maxQueuedBytes: platform.config.get('platform.transport.max-backpressure-bytes'),
      addressCap
    }).install()
  }
}

function registryFromConfig(platform: Platform): RuntimeRegistry {
  const cfg = platform.config
  // plugin runtimes follow hot reload: wrapped anew whenever the plugin registry's view changes
  let seen: readonly unknown[] | undefined
  let wrapped: PluginRuntime[] = []
  const fromPlugins = (): PluginRuntime[] => {
    const now = platform.plugins.runtimes()
    if (now !== seen) {
      seen = now
      wrapped = now.map((r) => new PluginRuntime(r))
    }
    return wrapped
  }
  const registry = new RuntimeRegistry(cfg.get('platform.ai.runtime'), fromPlugins)
  registry.add(new DemoRuntime())
  registry.add(
    new OpenAiRuntime({
      baseUrl: cfg.get('platform.ai.openai.base-url') ?? '',
      model: cfg.get('platform.ai.openai.model') ?? '',
      apiKey: cfg.get('platform.ai.openai.api-key'),
      timeoutMs: cfg.get('platform.ai.openai.timeout-ms'),
      idleTimeoutMs: cfg.get('platform.ai.openai.idle-timeout-ms'),
      maxConcurrency: cfg.get('platform.ai.openai.max-concurrency')
    })
  )
  return registry
}

/** The memory `platform.ai.memory.store` names (`postgres` by default in cluster mode), started. */
async function memoryFromConfig(platform: Platform): Promise<ConversationMemory> {
  const max = platform.config.get('platform.ai.memory.max-messages')
  switch (storeKindOf(platform.config, MEMORY_STORE_KEY)) {
    case 'memory':
      return new InMemoryConversationMemory(max)
    case 'postgres': {
      const memory = new PostgresConversationMemory(await platform.postgres(`${MEMORY_STORE_KEY} is postgres`), max)
      await memory.start()
      return memory
    }
    default:
      // LMDB is this node's alone, like the sessions: a session's memory needs no disk (a shared
      // Postgres store keeps it, so any node's admin API can read it)
      return new SessionScopedMemory(
        new LmdbConversationMemory(platform.store.db<AiMessage, MemoryKey>('ai-memory'), max)
      )
  }
}
