// The leaf value types of the MCP wire: imported by both types.ts and sessions.ts, so neither
// has to import the other.

export type JsonObject = Record<string, unknown>

/** A JSON object (not null, not an array). */
export function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency'
export const LOG_LEVELS: LogLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']
