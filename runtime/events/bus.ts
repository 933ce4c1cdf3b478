/**
 * One typed in-process bus. Producers never know their consumers (admin stream, metrics, logs,
 * the MCP server's list-changed notifications). A throwing listener is isolated from the rest.
 */
import { isoNow } from '../contracts/index.js'

export interface PlatformEvents {
  ResourceConnected: { uuid: string; transport: string; broadcaster: string }
  ResourceDisconnected: { uuid: string; reason: string }
  BroadcasterCreated: { id: string }
  BroadcasterDestroyed: { id: string }
  MessageBroadcast: { broadcasterId: string; resourceCount: number }
  ControlActionExecuted: { principal: string; action: string; target: string; success: boolean }
  PluginsChanged: { added: string[]; changed: string[]; removed: string[] }
  AgentSessionStarted: { agentName: string; sessionId: string }
  AgentSessionEnded: { agentName: string; sessionId: string; duration: number; messageCount: number }
  /** An MCP task (lower-case states: `working`, `completed`, ...) or an A2A task (`TASK_STATE_*`) changed state. */
  TaskStateChanged: { taskId: string; oldState: string; newState: string; protocol: 'mcp' | 'a2a' }
  /** A coordinator's call of a fleet agent, as it goes out; `coordinationId` is the coordinator turn's. */
  AgentDispatched: { coordinationId: string; agentName: string; skill: string }
  /** The same call's end; `duration` in milliseconds (0 when it was refused before the agent ran). */
  AgentCompleted: { coordinationId: string; agentName: string; skill: string; duration: number; success: boolean }
  /**
   * An AI turn ended, whichever endpoint ran it: `agentName` '' for a bare turn, `duration` in
   * milliseconds, `outcome` `completed`, `denied` (a policy or the kill switch), `cancelled` or
   * `error`, and the tokens its usage reported.
   */
  TurnCompleted: {
    agentName: string
    duration: number
    outcome: 'completed' | 'denied' | 'cancelled' | 'error'
    inputTokens: number
    outputTokens: number
  }
  /**
   * One policy evaluation: the admin event stream builds these from the decision log itself, only
   * while it has subscribers, so a turn pays nothing for them otherwise; not emitted on the bus.
   */
  GovernanceDecision: { policy: string; decision: string; reason: string; agentId: string | null; phase: string }
}

export type EventType = keyof PlatformEvents
export type PlatformEvent<T extends EventType = EventType> = { type: T; timestamp: string } & PlatformEvents[T]
type Listener<T extends EventType> = (event: PlatformEvent<T>) => void
// a set holds the listeners of one type (or '*'); emit calls each only with events of its type
type StoredListener = (event: PlatformEvent) => void

export class EventBus {
  private readonly listeners = new Map<string, Set<StoredListener>>()
  onError: (err: unknown, event: PlatformEvent) => void = () => {}

  on<T extends EventType>(type: T | '*', fn: Listener<T>): () => void {
    let set = this.listeners.get(type)
    if (set === undefined) {
      set = new Set()
      this.listeners.set(type, set)
    }
    const stored = fn as unknown as StoredListener
    set.add(stored)
    return () => {
      set!.delete(stored)
    }
  }

  /** True when someone listens: producers skip building events nobody reads. */
  has(type: EventType): boolean {
    return (this.listeners.get(type)?.size ?? 0) + (this.listeners.get('*')?.size ?? 0) > 0
  }

  emit<T extends EventType>(type: T, payload: PlatformEvents[T]): void {
    // joins, leaves and broadcasts emit here: two lookups and no allocation when nobody listens
    const own = this.listeners.get(type)
    const any = this.listeners.get('*')
    if ((own === undefined || own.size === 0) && (any === undefined || any.size === 0)) return
    // filled in place: a spread between two keys went to V8's slow path, most of an emit's CPU
    const event = Object.assign({ type }, payload) as PlatformEvent<T>
    event.timestamp = isoNow()
    if (own !== undefined) this.call(own, event)
    if (any !== undefined) this.call(any, event)
  }

  /**
   * `emit` of an event its producer built whole, fields in emit's order (type, the payload's,
   * the timestamp last): one object where emit copies a payload into another, for producers that
   * emit on every AI turn.
   */
  publish<T extends EventType>(event: PlatformEvent<T>): void {
    const own = this.listeners.get(event.type)
    const any = this.listeners.get('*')
    if (own !== undefined) this.call(own, event as PlatformEvent)
    if (any !== undefined) this.call(any, event as PlatformEvent)
  }

  private call(set: Set<StoredListener>, event: PlatformEvent): void {
    for (const fn of set) {
      try {
        fn(event)
      } catch (err) {
        this.onError(err, event)
      }
    }
  }
}
