/**
 * One coordination's journal events as the `journal/{id}/tree` and `journal/{id}/log` routes
 * answer them: a lineage tree, and a plain-text log of one line per event.
 */
import type { JournalEvent } from './fleet-view.js'

/** `{eventId, parentEventId?, type, coordinationId, timestamp, ...fields, children?}`. */
export type JournalNode = Record<string, unknown>

const HEAD = ['eventId', 'parentEventId', 'type', 'coordinationId', 'timestamp']

function nodeOf(e: JournalEvent): JournalNode {
  const node: JournalNode = { eventId: e.eventId }
  // a root has no parentEventId at all (stored as null)
  if (e.parentEventId !== null && e.parentEventId !== undefined) node.parentEventId = e.parentEventId
  node.type = e.type
  node.coordinationId = e.coordinationId
  node.timestamp = e.timestamp
  for (const [k, v] of Object.entries(e)) if (!HEAD.includes(k) && k !== 'children') node[k] = v
  return node
}

/** Nesting deeper than this would overflow JSON.stringify's stack; the chain goes on as a new root. */
export const MAX_TREE_DEPTH = 256

/**
 * Roots in journal order, each node's children in the order they were journaled. An event whose
 * parent is not in this coordination (a fork's, or one evicted) is a root; so is one caught in a
 * cycle of parent links (only damaged data holds one) and one that would nest deeper than
 * MAX_TREE_DEPTH, after the others: no event is ever dropped.
 */
export function journalTree(events: readonly JournalEvent[]): JournalNode[] {
  const nodes = events.map(nodeOf)
  const byId = new Map<unknown, number>()
  events.forEach((e, i) => {
    if (!byId.has(e.eventId)) byId.set(e.eventId, i)
  })
  const parentOf = events.map((e) => byId.get(e.parentEventId ?? undefined))
  const kids: number[][] = events.map(() => [])
  events.forEach((_, i) => {
    const p = parentOf[i]
    if (p !== undefined && p !== i) kids[p]!.push(i)
  })
  const placed = new Array<boolean>(events.length).fill(false)
  const roots: JournalNode[] = []
  // without recursion: a long chain of parents must not overflow the stack here either
  const place = (root: number): void => {
    placed[root] = true
    const stack: [number, number][] = [[root, 1]]
    while (stack.length > 0) {
      const [i, depth] = stack.pop()!
      if (depth >= MAX_TREE_DEPTH) continue
      const children: JournalNode[] = []
      for (const k of kids[i]!) {
        if (placed[k]) continue
        placed[k] = true
        children.push(nodes[k]!)
        stack.push([k, depth + 1])
      }
      if (children.length > 0) nodes[i]!.children = children
    }
    roots.push(nodes[root]!)
  }
  events.forEach((_, i) => {
    if (!placed[i] && (parentOf[i] === undefined || parentOf[i] === i)) place(i)
  })
  events.forEach((_, i) => {
    if (!placed[i]) place(i)
  })
  return roots
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]+/g

/** A field as one line's text: `?` when absent, control characters (a newline in an error) as a space. */
function v(x: unknown): string {
  if (x === undefined || x === null) return '?'
  const s = typeof x === 'string' ? x : typeof x === 'object' ? JSON.stringify(x) : String(x)
  return s.replace(CONTROL, ' ')
}

const ms = (x: unknown): string => (typeof x === 'number' ? `${x}ms` : '?')
const suffix = (x: unknown): string => (x === undefined || x === null || x === '' ? '' : `: ${v(x)}`)

/** One line kind per event type; the documented table in docs/fleet-journal.md. */
const LINES: Record<string, (e: JournalEvent) => string> = {
  CoordinationStarted: (e) => `START  ${v(e.coordinatorName)}`,
  AgentDispatched: (e) => `DISPATCH  ${v(e.agentName)} -> ${v(e.skill)}`,
  AgentCompleted: (e) => `DONE  ${v(e.agentName)} (${ms(e.durationMs ?? e.duration)})`,
  AgentFailed: (e) => `FAIL  ${v(e.agentName)}${suffix(e.error)}`,
  AgentEvaluated: (e) =>
    `EVAL  ${v(e.agentName)} by ${v(e.evaluatorName)}: ${v(e.score)} ${e.passed === true ? 'passed' : 'failed'}`,
  AgentHandoff: (e) => `HANDOFF  ${v(e.fromAgent)} -> ${v(e.toAgent)}${suffix(e.reason)}`,
  RouteEvaluated: (e) =>
    `ROUTE  ${v(e.inputAgent)} -> ${v(e.selectedAgent)} (${e.matched === true ? 'matched' : 'no match'})`,
  CoordinationCompleted: (e) => `COMPLETE  ${v(e.agentCallCount)} calls (${ms(e.totalDurationMs ?? e.totalDuration)})`,
  AgentActivityChanged: (e) => `ACTIVITY  ${v(e.agentName)} ${v(e.activityType)}${suffix(e.detail)}`,
  CircuitStateChanged: (e) => `CIRCUIT  ${v(e.agentName)} ${v(e.fromState)} -> ${v(e.toState)}`,
  CommitmentRecorded: (e) => `COMMIT  ${v(e.subject)} ${v(e.outcome)} (${e.signed === true ? 'signed' : 'unsigned'})`,
  ForkCreated: (e) => `FORK  from ${v(e.parentCoordinationId)}${suffix(e.reason)}`
}

/** A type without a line of its own: its name and its fields as `key=value`. */
function otherLine(e: JournalEvent): string {
  const rest = Object.entries(e)
    .filter(([k]) => !HEAD.includes(k))
    .map(([k, x]) => `${k}=${v(x)}`)
  return rest.length === 0 ? v(e.type) : `${v(e.type)}  ${rest.join(' ')}`
}

/** `<N> events:` and one indented line per event, oldest first. */
export function journalLog(events: readonly JournalEvent[]): string {
  let out = `${events.length} events:\n`
  for (const e of events) {
    const line = Object.hasOwn(LINES, e.type) ? LINES[e.type]!(e) : otherLine(e)
    out += `  ${line}\n`
  }
  return out
}
