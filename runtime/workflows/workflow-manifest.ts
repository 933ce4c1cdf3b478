/**
 * WorkflowManifest: a graph of nodes (agent, condition, fan-out, join, approval, output) and edges
 * that a coordinator runs. Validated on save with messages that name the field and the value.
 */
import { PlatformError } from '../contracts/index.js'
import { shown } from '../admin/index.js'
import { WORKFLOWS_ERRORS } from './errors.js'

export const NODE_TYPES = ['agent', 'condition', 'fan-out', 'join', 'approval', 'output'] as const
export type NodeType = (typeof NODE_TYPES)[number]

export interface WorkflowNode {
  id: string
  type: NodeType
  /** Defaults to the id. */
  label: string
  config: Record<string, unknown>
}

export interface WorkflowEdge {
  from: string
  to: string
  /** `success`, `failure`, `contains:<s>`, `default`, or "" (always). */
  condition: string
}

export interface WorkflowManifest {
  id: string
  name: string
  description: string
  nodes: WorkflowNode[]
  edges: WorkflowEdge[]
  createdBy: string
  /** ISO-8601 instants, set by the store. */
  createdAt: string
  updatedAt: string
  version: number
}

/** A manifest that breaks a rule: WORKFLOW_INVALID naming what is wrong. */
function invalid(detail: string): PlatformError {
  return new PlatformError(WORKFLOWS_ERRORS.WORKFLOW_INVALID, { detail })
}

const ID = /^[A-Za-z0-9_-]+$/

function id(v: unknown, label: string): string {
  if (typeof v !== 'string' || !ID.test(v)) throw invalid(`${label} must match [A-Za-z0-9_-]+ (was: ${shown(v)})`)
  return v
}

function str(v: unknown, label: string): string {
  if (v === undefined || v === null) return ''
  if (typeof v !== 'string') throw invalid(`${label} must be a string`)
  return v
}

function object(v: unknown, label: string): Record<string, unknown> {
  if (v === undefined || v === null) return {}
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid(`${label} must be an object`)
  return v as Record<string, unknown>
}

/**
 * The manifest a request body describes (timestamps and createdBy are the store's to set), or a
 * WORKFLOW_INVALID naming what is wrong.
 */
export function parseManifest(body: unknown): WorkflowManifest {
  const b = object(body, 'workflow')
  if (body === undefined || body === null) throw invalid('expected a JSON object (a workflow manifest)')
  const wid = id(b.id, 'id')
  const name = str(b.name, 'name')
  if (name.trim() === '') throw invalid('name must not be blank')
  const version = b.version
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1)
    throw invalid(`version must be an integer >= 1 (was: ${shown(version)})`)
  if (!Array.isArray(b.nodes)) throw invalid('nodes must be an array')
  if (b.edges !== undefined && !Array.isArray(b.edges)) throw invalid('edges must be an array')
  const nodes: WorkflowNode[] = []
  const ids = new Set<string>()
  for (const raw of b.nodes as unknown[]) {
    const n = object(raw, 'node')
    const nid = id(n.id, 'node.id')
    if (ids.has(nid)) throw invalid(`duplicate node id: ${nid}`)
    ids.add(nid)
    const type = id(n.type, 'node.type')
    if (!(NODE_TYPES as readonly string[]).includes(type))
      throw invalid(`node.type must be one of ${NODE_TYPES.join(', ')} (was: ${type})`)
    const label = str(n.label, 'node.label')
    nodes.push({
      id: nid,
      type: type as NodeType,
      label: label === '' ? nid : label,
      config: object(n.config, 'node.config')
    })
  }
  const edges: WorkflowEdge[] = []
  for (const raw of (b.edges ?? []) as unknown[]) {
    const e = object(raw, 'edge')
    const from = id(e.from, 'edge.from')
    const to = id(e.to, 'edge.to')
    if (from === to) throw invalid(`edge cannot loop on itself: ${from}`)
    if (!ids.has(from)) throw invalid(`edge.from references unknown node: ${from}`)
    if (!ids.has(to)) throw invalid(`edge.to references unknown node: ${to}`)
    edges.push({ from, to, condition: str(e.condition, 'edge.condition') })
  }
  return {
    id: wid,
    name,
    description: str(b.description, 'description'),
    nodes,
    edges,
    createdBy: str(b.createdBy, 'createdBy'),
    createdAt: '',
    updatedAt: '',
    version
  }
}
