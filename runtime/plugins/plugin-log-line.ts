import type { Logger } from 'pino'

const LEVELS = new Set(['debug', 'info', 'warn', 'error'])

/**
 * A log line a sandboxed plugin wrote: `data` is its fields as JSON (anything else is dropped), an
 * unknown level logs as info, and the line is tagged with the plugin. Log lines belong to no call.
 */
export function logPluginLine(log: Logger, plugin: string, level: string, msg: string, data: string): void {
  let fields: Record<string, unknown> = {}
  try {
    const d = JSON.parse(data) as unknown
    if (d !== null && typeof d === 'object' && !Array.isArray(d)) fields = d as Record<string, unknown>
  } catch {
    /* not JSON: dropped */
  }
  log[LEVELS.has(level) ? (level as 'info') : 'info']({ ...fields, plugin }, msg)
}
