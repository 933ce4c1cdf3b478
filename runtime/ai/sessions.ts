import { randomUUID } from 'node:crypto'
import type { EventBus } from '../events/index.js'

/** One client connection talking to one agent, as the admin API lists it. */
export interface AgentSessionInfo {
  sessionId: string
  agentName: string
  /** How the client is connected (`websocket`, `sse`, `long-polling`, ...). */
  transport: string
  /** ISO-8601 instants. */
  startTime: string
  lastActivity: string
  /** Messages seen on this session (each `touch`). */
  messageCount: number
}

interface Live {
  sessionId: string
  agentName: string
  transport: string
  started: number
  last: number
  messageCount: number
}

/**
 * The agent sessions alive now. Started when a client connection first talks to an agent, touched
 * on each message, ended when the connection goes; start and end are announced on the bus, so the
 * admin stream and metrics see them without knowing this class.
 */
export class AgentSessions {
  private readonly live = new Map<string, Live>()
  /** Session ids per agent: counts and listings per agent stay cheap with many agents. */
  private readonly byAgent = new Map<string, Set<string>>()

  constructor(
    private readonly bus: EventBus,
    private readonly now: () => number = Date.now
  ) {}

  start(agentName: string, transport: string): AgentSessionInfo {
    return info(this.live.get(this.open(agentName, transport))!)
  }

  /** `start` answering the new session's id alone: a turn's connection needs no dates formatted. */
  open(agentName: string, transport: string): string {
    if (typeof agentName !== 'string' || agentName === '') throw new TypeError('agent name must be a non-empty string')
    if (typeof transport !== 'string' || transport === '') throw new TypeError('transport must be a non-empty string')
    const at = this.now()
    const s: Live = { sessionId: randomUUID(), agentName, transport, started: at, last: at, messageCount: 0 }
    this.live.set(s.sessionId, s)
    let ids = this.byAgent.get(agentName)
    if (ids === undefined) {
      ids = new Set()
      this.byAgent.set(agentName, ids)
    }
    ids.add(s.sessionId)
    this.bus.emit('AgentSessionStarted', { agentName, sessionId: s.sessionId })
    return s.sessionId
  }

  /** Counts one message; false when the session is not (or no longer) active. */
  touch(sessionId: string): boolean {
    const s = this.live.get(sessionId)
    if (s === undefined) return false
    s.messageCount++
    s.last = this.now()
    return true
  }

  /** Ends a session once; false when it was not active (already ended or unknown). */
  end(sessionId: string): boolean {
    const s = this.live.get(sessionId)
    if (s === undefined) return false
    this.live.delete(sessionId)
    const ids = this.byAgent.get(s.agentName)!
    ids.delete(sessionId)
    if (ids.size === 0) this.byAgent.delete(s.agentName)
    this.bus.emit('AgentSessionEnded', {
      agentName: s.agentName,
      sessionId,
      duration: this.now() - s.started,
      messageCount: s.messageCount
    })
    return true
  }

  /** Ends every active session (platform shutdown), each announced like any other end. */
  endAll(): void {
    for (const id of [...this.live.keys()]) this.end(id)
  }

  get(sessionId: string): AgentSessionInfo | undefined {
    const s = this.live.get(sessionId)
    return s === undefined ? undefined : info(s)
  }

  /** Active sessions of one agent, or of all agents without a name. */
  activeCount(agentName?: string): number {
    return agentName === undefined ? this.live.size : (this.byAgent.get(agentName)?.size ?? 0)
  }

  /** The active sessions of one agent, oldest first. */
  list(agentName: string): AgentSessionInfo[] {
    const ids = this.byAgent.get(agentName)
    return ids === undefined ? [] : [...ids].map((id) => info(this.live.get(id)!))
  }
}

function info(s: Live): AgentSessionInfo {
  return {
    sessionId: s.sessionId,
    agentName: s.agentName,
    transport: s.transport,
    startTime: new Date(s.started).toISOString(),
    lastActivity: new Date(s.last).toISOString(),
    messageCount: s.messageCount
  }
}
