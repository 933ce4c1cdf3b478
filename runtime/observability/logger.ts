import { pino, type Logger, type LogFn } from 'pino'
import pretty from 'pino-pretty'

export type { Logger }

/** Keys pino writes itself on every record. */
const RECORD_KEYS = new Set(['level', 'time'])
const SHADOWED = 'shadowed'
const boundOf = new WeakMap<object, Record<string, unknown>>()

/**
 * pino writes a child's bindings and the call's fields side by side, so `child({plugin})` then
 * `info({plugin})` (or a plugin's own `ctx.log` data carrying `level`, `msg` or `plugin`) gives a
 * record with the key twice, which JSON readers resolve differently. A call field that repeats a
 * binding with the same value is dropped; one that differs, or that names a key pino writes, moves
 * under `shadowed`, so the record's own keys stay the truth.
 */
function logMethod(this: Logger, args: Parameters<LogFn>, method: LogFn): void {
  const obj = args[0] as unknown
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj) || obj instanceof Error) {
    method.apply(this, args)
    return
  }
  let bound = boundOf.get(this)
  if (bound === undefined) {
    bound = this.bindings()
    boundOf.set(this, bound)
  }
  const withMessage = typeof args[1] === 'string'
  let clean: Record<string, unknown> | undefined
  let shadowed: Record<string, unknown> | undefined
  for (const [k, v] of Object.entries(obj)) {
    const isBound = Object.hasOwn(bound, k)
    if (!isBound && !RECORD_KEYS.has(k) && !(withMessage && k === 'msg') && k !== SHADOWED) continue
    clean ??= { ...(obj as Record<string, unknown>) }
    delete clean[k]
    if (!(isBound && bound[k] === v)) (shadowed ??= {})[k] = v
  }
  if (clean === undefined) {
    method.apply(this, args)
    return
  }
  if (shadowed !== undefined) clean[SHADOWED] = shadowed
  method.apply(this, [clean, ...args.slice(1)] as unknown as Parameters<LogFn>)
}

/** JSON lines, or pino-pretty when stdout is a terminal. */
export function createLogger(
  level: string,
  opts: { pretty?: boolean; destination?: NodeJS.WritableStream } = {}
): Logger {
  const usePretty = opts.pretty ?? (opts.destination === undefined && process.stdout.isTTY === true)
  const base = {
    level,
    base: { service: 'agent-platform' },
    timestamp: pino.stdTimeFunctions.isoTime,
    hooks: { logMethod }
  }
  if (usePretty) return pino(base, pretty({ colorize: true, destination: 1, sync: true }))
  return opts.destination !== undefined ? pino(base, opts.destination) : pino(base)
}
