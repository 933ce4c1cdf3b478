/** The control audit log's record: one admin write attempt, allowed or denied. */
export interface ControlAuditEntry {
  timestamp: string
  principal: string
  action: string
  target: string
  success: boolean
  message: string
  /** The node that wrote it, when the log is read from the store every node shares. */
  node?: string
}

export type DecisionValue = 'admit' | 'transform' | 'deny' | 'prefer' | 'error'

/** The governance decision log's record, rendered with its keys in the order declared here. */
export interface DecisionEntry {
  timestamp: string
  policy_name: string
  policy_source: string
  policy_version: string
  decision: DecisionValue
  reason: string
  evaluation_ms: number
  context_snapshot: Record<string, unknown>
  /** The node that decided, when the log is read from the store every node shares. */
  node?: string
}
