/**
 * `ctx.fleet` of a coordinator's run, host side: the `agent.fleet.*` calls of one turn. The turn
 * is one coordination (`coord-<uuid>`); its principal and user carry into every dispatch, and
 * the turn's end (cancel included) cancels the calls still in flight.
 */
import type { AgentRunExtension, AgentRunTurn } from '../ai/index.js'
import type { AgentCall, DispatchContext, FleetDispatcher, JournalEventType } from './fleet-types.js'
import type { JournalWriter } from './journal-writer.js'
import { newCoordinationId } from './coordination-id.js'

const MAX_CALLS = 64

/** A call as a sandbox sent it, checked: `{ agent, skill?, args? }`. */
export function checkCall(raw: unknown, where: string): AgentCall {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new TypeError(`${where}: a call must be { agent, skill?, args? }`)
  const c = raw as { agent?: unknown; skill?: unknown; args?: unknown }
  if (typeof c.agent !== 'string' || c.agent === '') throw new TypeError(`${where}: 'agent' must be a non-empty string`)
  if (c.skill !== undefined && c.skill !== null && (typeof c.skill !== 'string' || c.skill === ''))
    throw new TypeError(`${where}: 'skill' must be a non-empty string`)
  if (c.args !== undefined && c.args !== null && (typeof c.args !== 'object' || Array.isArray(c.args)))
    throw new TypeError(`${where}: 'args' must be an object`)
  return {
    agent: c.agent,
    skill: typeof c.skill === 'string' ? c.skill : 'run',
    args: (c.args ?? {}) as Record<string, unknown>
  }
}

function checkCalls(raw: unknown, op: string): AgentCall[] {
  if (!Array.isArray(raw)) throw new TypeError(`${op}(): the calls must be an array`)
  if (raw.length > MAX_CALLS) throw new TypeError(`${op}(): at most ${MAX_CALLS} calls at once`)
  return raw.map((c, i) => checkCall(c, `${op}(): calls[${i}]`))
}

// what the sandbox may journal itself: the outcome of its own route conditions and evaluators
const NOTES: Partial<Record<JournalEventType, Record<string, 'string' | 'number' | 'boolean' | 'nullable'>>> = {
  RouteEvaluated: { inputAgent: 'string', selectedAgent: 'nullable', matched: 'boolean' },
  AgentEvaluated: { agentName: 'string', evaluatorName: 'string', score: 'number', passed: 'boolean' }
}

function checkNote(type: unknown, raw: unknown): { type: JournalEventType; fields: Record<string, unknown> } {
  const shape = typeof type === 'string' ? NOTES[type as JournalEventType] : undefined
  if (shape === undefined || raw === null || typeof raw !== 'object') throw new TypeError('fleet note: unknown event')
  const fields: Record<string, unknown> = {}
  for (const [k, kind] of Object.entries(shape)) {
    const v = (raw as Record<string, unknown>)[k]
    const ok = kind === 'nullable' ? v === null || typeof v === 'string' : typeof v === kind
    if (!ok) throw new TypeError(`fleet note: '${k}' must be a ${kind === 'nullable' ? 'string or null' : kind}`)
    fields[k] = typeof v === 'string' ? v.slice(0, 200) : v
  }
  return { type: type as JournalEventType, fields }
}

export function coordinatorCalls(dispatcher: FleetDispatcher, journal: JournalWriter): AgentRunExtension {
  return (turn: AgentRunTurn) => {
    if (turn.agent.fleet === undefined) return undefined
    let coordinationId: string | undefined
    // the last completed call of each agent: an evaluation of its answer hangs under it
    const lastOf = new Map<string, string>()
    const ctx = (): DispatchContext => ({
      coordinationId: (coordinationId ??= newCoordinationId()),
      coordinator: turn.agent.name,
      principal: turn.request.userId ?? 'anonymous',
      ...(turn.request.userId !== null ? { userId: turn.request.userId } : {}),
      parentEventId: null,
      signal: turn.signal,
      activity: (step, data) => turn.step(step, `${step} ${String(data.agent)}`, data)
    })
    return async (op, args) => {
      if (turn.signal.aborted) throw new Error(`ctx.fleet.${op}: the turn has ended`)
      switch (op) {
        case 'call': {
          const r = await dispatcher.call(ctx(), checkCall(args[0], 'call()'))
          if (r.success && typeof r.metadata.eventId === 'string') lastOf.set(r.agentName, r.metadata.eventId)
          return r
        }
        case 'parallel':
          return await dispatcher.parallel(ctx(), checkCalls(args[0], 'parallel'))
        case 'pipeline':
          return await dispatcher.pipeline(ctx(), checkCalls(args[0], 'pipeline'))
        case 'vote':
          return await dispatcher.vote(ctx(), checkCalls(args[0], 'vote'))
        case 'note': {
          const { type, fields } = checkNote(args[0], args[1])
          const c = ctx()
          const parent = type === 'AgentEvaluated' ? (lastOf.get(fields.agentName as string) ?? null) : null
          journal.emit(c.coordinationId, parent, type, fields)
          return null
        }
        default:
          throw new Error(`unknown fleet call '${op}'`)
      }
    }
  }
}
