/**
 * The shape of a workflow as a runnable graph: the checks a run makes before it starts (size, cycles),
 * the order nodes run in, and whether an edge's condition lets its source's outcome through.
 */
import { PlatformError } from '../contracts/index.js'
import { WORKFLOWS_ERRORS } from './errors.js'
import type { WorkflowEdge, WorkflowManifest, WorkflowNode } from './workflow-manifest.js'

/** A run refuses a workflow with more nodes than this. */
export const MAX_WORKFLOW_NODES = 500

/** Why `w` cannot run: WORKFLOW_NOT_RUNNABLE, the detail as its message. */
export function notRunnable(detail: string): PlatformError {
  return new PlatformError(WORKFLOWS_ERRORS.WORKFLOW_NOT_RUNNABLE, { detail })
}

/** How a node ended, as its outgoing edges see it. */
export interface Outcome {
  ok: boolean
  text: string
}

export interface WorkflowGraph {
  /** Nodes in topological order; among ready nodes, manifest order first. */
  order: WorkflowNode[]
  incoming: Map<string, WorkflowEdge[]>
  outgoing: Map<string, WorkflowEdge[]>
  byId: Map<string, WorkflowNode>
}

/** The graph of `w`, or WORKFLOW_NOT_RUNNABLE naming why it cannot run. */
export function graphOf(w: WorkflowManifest): WorkflowGraph {
  if (w.nodes.length > MAX_WORKFLOW_NODES)
    throw notRunnable(`workflow has ${w.nodes.length} nodes, limit is ${MAX_WORKFLOW_NODES}`)
  const byId = new Map(w.nodes.map((n) => [n.id, n]))
  const incoming = new Map<string, WorkflowEdge[]>(w.nodes.map((n) => [n.id, []]))
  const outgoing = new Map<string, WorkflowEdge[]>(w.nodes.map((n) => [n.id, []]))
  for (const e of w.edges) {
    // a stored manifest was validated on save; this guards one built by hand
    if (!byId.has(e.from) || !byId.has(e.to)) throw notRunnable(`edge ${e.from} -> ${e.to} names no node`)
    if (!knownCondition(e.condition))
      throw notRunnable(
        `edge ${e.from} -> ${e.to} has an unknown condition: ${e.condition} (success, failure, contains:<text>, default or blank)`
      )
    outgoing.get(e.from)!.push(e)
    incoming.get(e.to)!.push(e)
  }
  for (const n of w.nodes) checkConfig(n)
  const waiting = new Map(w.nodes.map((n) => [n.id, incoming.get(n.id)!.length]))
  const position = new Map(w.nodes.map((n, i) => [n.id, i]))
  const ready = w.nodes.filter((n) => waiting.get(n.id) === 0)
  const order: WorkflowNode[] = []
  while (ready.length > 0) {
    const n = ready.shift()!
    order.push(n)
    for (const e of outgoing.get(n.id)!) {
      const left = waiting.get(e.to)! - 1
      waiting.set(e.to, left)
      if (left === 0) insertByPosition(ready, byId.get(e.to)!, position)
    }
  }
  if (order.length < w.nodes.length) {
    const stuck = w.nodes.filter((n) => waiting.get(n.id)! > 0).map((n) => n.id)
    throw notRunnable(`workflow contains a cycle through nodes [${stuck.join(', ')}]`)
  }
  return { order, incoming, outgoing, byId }
}

/** The longest an approval may wait: a week. */
export const MAX_APPROVAL_SECONDS = 7 * 24 * 3600

function checkConfig(n: WorkflowNode): void {
  const c = n.config
  const bad = (key: string, want: string): never => {
    throw notRunnable(`node ${n.id}: config.${key} must be ${want}`)
  }
  const optString = (key: string): void => {
    if (c[key] !== undefined && typeof c[key] !== 'string') bad(key, 'a string')
  }
  if (n.type === 'agent') {
    optString('agent')
    optString('skill')
    if (c.agent === '') bad('agent', 'a non-empty string')
    const args = c.args
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
      bad('args', 'an object')
  } else if (n.type === 'join') optString('separator')
  else if (n.type === 'approval') {
    optString('message')
    const s = c.timeoutSeconds
    if (s !== undefined && (typeof s !== 'number' || !(s > 0) || s > MAX_APPROVAL_SECONDS))
      bad('timeoutSeconds', `a number of seconds above 0 and at most ${MAX_APPROVAL_SECONDS}`)
  }
}

function insertByPosition(ready: WorkflowNode[], n: WorkflowNode, position: Map<string, number>): void {
  const p = position.get(n.id)!
  let i = ready.length
  while (i > 0 && position.get(ready[i - 1]!.id)! > p) i--
  ready.splice(i, 0, n)
}

/** True when the edge's condition passes for its source's outcome; `default` is decided by the caller. */
export function conditionHolds(condition: string, from: Outcome): boolean {
  const c = condition.trim()
  if (c === '') return true
  if (c === 'success') return from.ok
  if (c === 'failure') return !from.ok
  if (c.startsWith('contains:')) return from.text.includes(c.slice('contains:'.length))
  return false
}

/** The conditions a run understands; anything else never passes. */
export function knownCondition(condition: string): boolean {
  const c = condition.trim()
  return c === '' || c === 'success' || c === 'failure' || c === 'default' || c.startsWith('contains:')
}

/**
 * Which of a node's outgoing edges are taken: each whose condition holds; a `default` edge only when
 * no conditional sibling (success, failure, contains) was taken.
 */
export function takenEdges(edges: readonly WorkflowEdge[], from: Outcome): WorkflowEdge[] {
  const holds = edges.map((e) => e.condition.trim() !== 'default' && conditionHolds(e.condition, from))
  const conditionalTaken = edges.some((e, i) => holds[i] && e.condition.trim() !== '')
  return edges.filter((e, i) => holds[i] || (!conditionalTaken && e.condition.trim() === 'default'))
}
