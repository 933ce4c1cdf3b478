import type { Platform } from '../platform.js'
import { type Context } from '../http/index.js'
import { PlatformError } from '../contracts/index.js'
import { Cancellation, type RegisteredAgent } from '../plugins/index.js'
import {
  Frame,
  Reason,
  transportOf,
  type AddressCap,
  type Broadcaster,
  type EndpointHooks,
  type EndpointRequest,
  type MessageRate,
  type Resource,
  type TransportKind
} from '../transport/index.js'
import type { AiService } from './ai-service.js'
import { AGENT_BASE, agentChatPath } from './agent-paths.js'
import { SessionFrames } from './agent-frames.js'
import { parseClientFrame } from './agent-prompt.js'
import { playTurn, type PlayInput, type TurnTarget } from './agent-turn-player.js'
import { AI_ERRORS } from './errors.js'
import { TextBatch } from './text-batch.js'
import { memoryKey, turnInput, type Caller, type Prompt } from './agent-turn-input.js'
import { HTTP_ERRORS } from '../http/index.js'

/** How the agent endpoint admits callers and bounds what they send (platform.ai.endpoint.*). */
export interface AgentEndpointPolicy {
  auth: 'open' | 'required'
  maxMessageBytes: number
  rate: MessageRate
  jsonMaxDepth: number
  maxQueuedBytes: number
  /** Connections per client address, shared by every agent path and the AG-UI endpoint. */
  addressCap: AddressCap
}

/** One connection talking to one agent: its session, its frames' seq, the turn in flight. */
interface Conn {
  r: Resource
  path: string
  agent: string
  frames: SessionFrames
  caller: Caller
  turn: Cancellation | undefined
  closed: boolean
  /** Memory keys only this anonymous connection can reach: forgotten when it goes. */
  ownKeys: Set<string>
}

const PATTERN = `${AGENT_BASE}/{name}`
const BROADCASTER_PREFIX = 'agent:'
const SESSION_TRANSPORT: Record<TransportKind, string> = {
  WEBSOCKET: 'websocket',
  SSE: 'sse',
  LONG_POLLING: 'long-polling'
}

/**
 * The agent chat endpoint: `/platform/agent/{name}` (or an agent's own `endpoint`) on WebSocket,
 * SSE and long-polling. A connection is one agent session; each client frame is one turn, whose
 * frames stream back to that connection (to every member of the agent's room for a
 * `broadcastReply` agent). A POST without a member id streams one turn back as SSE on its own
 * response. Agents are looked up per request, so hot reload adds and removes them safely.
 */
export class AgentEndpoint {
  private readonly conns = new Map<string, Conn>()
  private byPath: Map<string, RegisteredAgent> | undefined
  private readonly mounted = new Set<string>()

  constructor(
    private readonly platform: Platform,
    private readonly ai: AiService,
    private readonly policy: AgentEndpointPolicy
  ) {}

  install(): void {
    const p = this.platform
    p.bus.on('PluginsChanged', () => {
      this.byPath = undefined
      this.mountCustomPaths()
    })
    // every way a resource goes (close, server end, broadcaster destroyed, shutdown) passes here
    p.bus.on('ResourceDisconnected', (e) => {
      const c = this.conns.get(e.uuid)
      if (c !== undefined) this.gone(c)
    })
    transportOf(p).expose(
      PATTERN,
      this.hooks((req) => `${AGENT_BASE}/${req.params.name ?? ''}`)
    )
    this.mountCustomPaths()
  }

  private agentAt(path: string): RegisteredAgent | undefined {
    this.byPath ??= new Map(this.platform.plugins.agents().map((a) => [agentChatPath(a), a]))
    return this.byPath.get(path)
  }

  /** Agents whose `endpoint` names their own chat path get it mounted (paths are never unmounted). */
  private mountCustomPaths(): void {
    for (const a of this.platform.plugins.agents()) {
      const path = agentChatPath(a)
      if (this.mounted.has(path) || path.includes('{') || /^\/platform\/agent\/[^/]+$/.test(path)) continue
      this.mounted.add(path)
      try {
        transportOf(this.platform).expose(
          path,
          this.hooks(() => path)
        )
      } catch (err) {
        this.platform.logger.warn(
          { err, agent: a.name, path },
          'agent endpoint path not mounted: it clashes with a route'
        )
      }
    }
  }

  private hooks(pathOf: (req: EndpointRequest) => string): EndpointHooks {
    return {
      className: 'AgentBroadcaster',
      rawText: true,
      maxMessageBytes: this.policy.maxMessageBytes,
      messageRate: this.policy.rate,
      addressCap: this.policy.addressCap,
      resolve: (req) => BROADCASTER_PREFIX + pathOf(req),
      joinOptions: (req) => {
        const path = pathOf(req)
        const agent = this.agentAt(path)
        // 404 before anything opens, a WebSocket upgrade included (an agent that goes between the
        // upgrade and the open is answered by an error frame and close 4404 in `joined`)
        if (agent === undefined) throw new PlatformError(AI_ERRORS.AGENT_NOT_FOUND, { agent: path })
        const caller = this.admit(req.headers, req.query, agent.name)
        return caller === undefined ? {} : { principal: caller.name, roles: caller.roles }
      },
      setup: (b) => {
        b.autoDestroy = true
      },
      joined: (r) => {
        this.joined(r)
      },
      message: (r, text) => this.message(r, text as string),
      detachedPost: (ctx, text) =>
        this.oneShot(ctx, pathOf({ params: ctx.params, query: ctx.query, headers: ctx.headers }), text as string)
    }
  }

  /**
   * The caller's principal; throws 401 when the endpoint requires one and none resolves. A token
   * may come as `access_token` in the query, since a browser's WebSocket cannot set a header; a
   * header the client did send wins.
   */
  private admit(headers: Readonly<Record<string, string>>, query: URLSearchParams, agent: string): Caller {
    const t = query.get('access_token')
    const creds =
      t !== null && t !== '' && headers.authorization === undefined && headers['x-platform-auth'] === undefined
        ? { ...headers, authorization: `Bearer ${t}` }
        : headers
    const principal = this.platform.principals.fromHeaders(creds)
    if (principal === null && this.policy.auth === 'required')
      throw new PlatformError(AI_ERRORS.AGENT_AUTH_REQUIRED, { path: `agent '${agent}'` })
    return principal === null ? undefined : { name: principal.name, roles: principal.roles }
  }

  private joined(r: Resource): void {
    const path = r.broadcaster.id.slice(BROADCASTER_PREFIX.length)
    const agent = this.agentAt(path)
    if (agent === undefined) {
      this.notFound(r, path)
      return
    }
    const sessionId = this.ai.sessions.open(agent.name, SESSION_TRANSPORT[r.transport])
    const c: Conn = {
      r,
      path,
      agent: agent.name,
      frames: new SessionFrames(sessionId),
      caller: r.principal === undefined ? undefined : { name: r.principal, roles: r.roles ?? [] },
      turn: undefined,
      closed: false,
      ownKeys: new Set()
    }
    this.conns.set(r.uuid, c)
    const value: Record<string, unknown> = { agent: agent.name, uuid: r.uuid }
    if (r.token !== undefined) value.token = r.token
    r.deliver(Frame.json(c.frames.metadata('session', value)))
  }

  private notFound(r: Resource, path: string): void {
    const body = new PlatformError(AI_ERRORS.AGENT_NOT_FOUND, { agent: path }).body()
    r.deliver(Frame.json(JSON.stringify({ type: 'error', data: body.error, code: body.code })))
    transportOf(this.platform).end(r, Reason.notFound)
  }

  private message(r: Resource, text: string): number {
    const c = this.conns.get(r.uuid)
    if (c === undefined || c.closed) return 0
    this.ai.sessions.touch(c.frames.sessionId)
    const frame = parseClientFrame(text, this.policy.jsonMaxDepth)
    const say = (s: string): void => r.deliver(Frame.json(s))
    if (frame.kind === 'bad') {
      say(c.frames.refusal(frame.code, frame.message))
      return 1
    }
    if (frame.kind === 'cancel') {
      if (c.turn === undefined) say(c.frames.refusal('no-turn', 'no turn in flight to cancel'))
      else c.turn.abort()
      return 1
    }
    const agent = this.agentAt(c.path)
    if (agent === undefined) {
      this.notFound(r, c.path)
      return 0
    }
    if (c.turn !== undefined) {
      say(
        c.frames.refusal(
          'busy',
          'a turn is already in flight on this connection: wait for its complete or error frame, or send {"type":"cancel"}'
        )
      )
      return 1
    }
    this.startTurn(c, agent, frame)
    return 1
  }

  /** Plays one turn to `target`; a failure of the player itself is logged, never thrown. */
  private play(agent: RegisteredAgent, input: PlayInput, target: TurnTarget, signal: Cancellation): Promise<void> {
    return playTurn(this.ai, input, target, signal, this.platform.logger).catch((err: unknown) => {
      this.platform.logger.error({ err, agent: agent.name }, 'agent endpoint: turn failed')
    })
  }

  /** One connection's frames; a pass's text deltas in one corked write. */
  private connTarget(c: Conn): TurnTarget {
    const texts = new TextBatch(c.frames, false, (b) => {
      if (b.count === 1) c.r.deliverBytes(b.frame(0))
      else
        c.r.batch(() => {
          for (let i = 0; i < b.count; i++) c.r.deliverBytes(b.frame(i))
        })
    })
    return {
      send: (build) => {
        texts.flush()
        c.r.deliver(Frame.json(build(c.frames)))
      },
      text: (delta) => texts.add(delta)
    }
  }

  private startTurn(c: Conn, agent: RegisteredAgent, prompt: Prompt): void {
    const ac = new Cancellation()
    c.turn = ac
    const key = memoryKey(c.caller, c.frames.sessionId, prompt.conversationId)
    // a key of this session's own that no earlier turn here used holds nothing yet
    let fresh = false
    if (c.caller === undefined || prompt.conversationId === undefined) {
      fresh = !c.ownKeys.has(key)
      c.ownKeys.add(key)
    }
    const broadcast = agent.broadcastReply === true
    const target: TurnTarget = broadcast ? this.roomTarget(c.r.broadcaster) : this.connTarget(c)
    this.play(
      agent,
      turnInput(agent, prompt, c.frames.sessionId, c.caller, key, !broadcast, fresh),
      target,
      ac
    ).finally(() => {
      c.turn = undefined
      if (c.closed) this.forget(c)
    })
  }

  /**
   * Every member of the agent's room (and `also`, a sender outside it), each frame stamped with
   * the member's own session and seq.
   */
  private roomTarget(room: Broadcaster | undefined, also?: TurnTarget): TurnTarget {
    return {
      send: (build) => {
        also?.send(build)
        for (const r of room?.resources.values() ?? []) {
          const c = this.conns.get(r.uuid)
          if (c !== undefined && !c.closed) r.deliver(Frame.json(build(c.frames)))
        }
      }
    }
  }

  private gone(c: Conn): void {
    c.closed = true
    this.conns.delete(c.r.uuid)
    this.ai.sessions.end(c.frames.sessionId)
    if (c.turn !== undefined) c.turn.abort()
    else this.forget(c)
  }

  /** Forgets the memory no one can reach once this connection is gone. */
  private forget(c: Conn): void {
    for (const key of c.ownKeys)
      this.ai.memory.clear(key).catch((err: unknown) => {
        this.platform.logger.warn({ err }, 'agent endpoint: clearing a closed session memory failed')
      })
    c.ownKeys.clear()
  }

  /** `POST` without a member id: one turn streamed back as SSE on this response, in a session of its own. */
  private oneShot(ctx: Context, path: string, text: string): undefined {
    const agent = this.agentAt(path)
    if (agent === undefined) throw new PlatformError(AI_ERRORS.AGENT_NOT_FOUND, { agent: path })
    const caller = this.admit(ctx.headers, ctx.query, agent.name)
    const frame = parseClientFrame(text, this.policy.jsonMaxDepth)
    if (frame.kind === 'bad') throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: frame.message })
    if (frame.kind === 'cancel')
      throw new PlatformError(HTTP_ERRORS.INVALID_BODY, {
        detail: 'nothing to cancel: a one-shot POST cancels its turn by closing the response'
      })
    const slot = this.policy.addressCap.take(ctx.address(), 'POST')
    const sessionId = this.ai.sessions.open(agent.name, 'sse')
    this.ai.sessions.touch(sessionId)
    const frames = new SessionFrames(sessionId)
    const stream = ctx.sse({ maxQueuedBytes: this.policy.maxQueuedBytes })
    const ac = new Cancellation()
    let playing = true
    stream.onClose(() => {
      slot.release()
      if (playing) ac.abort() // aborting an ended turn builds an AbortError (a stack trace) for no one
    })
    const key = memoryKey(caller, sessionId, frame.conversationId)
    const own = caller === undefined || frame.conversationId === undefined
    const texts = new TextBatch(frames, true, (b) => void stream.sendBytes(b.all()))
    const mine: TurnTarget = {
      send: (build) => {
        texts.flush()
        void stream.send({ data: build(frames) })
      },
      text: (delta) => texts.add(delta)
    }
    const broadcast = agent.broadcastReply === true
    const target = broadcast
      ? this.roomTarget(transportOf(this.platform).findBroadcaster(BROADCASTER_PREFIX + path), mine)
      : mine
    const input = turnInput(agent, frame, sessionId, caller, key, !broadcast, own)
    this.play(agent, input, target, ac).finally(() => {
      playing = false
      slot.release()
      stream.close()
      this.ai.sessions.end(sessionId)
      if (own) void this.ai.memory.clear(key).catch(() => {})
    })
    return undefined
  }
}
