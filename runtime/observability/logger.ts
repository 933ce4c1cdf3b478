import { pino, type Logger } from 'pino'
import pretty from 'pino-pretty'

export type { Logger }

/** JSON lines, or pino-pretty when stdout is a terminal. */
export function createLogger (level: string, opts: { pretty?: boolean, destination?: NodeJS.WritableStream } = {}): Logger {
  const usePretty = opts.pretty ?? (opts.destination === undefined && process.stdout.isTTY === true)
  const base = { level, base: { service: 'agent-platform' }, timestamp: pino.stdTimeFunctions.isoTime }
  if (usePretty) return pino(base, pretty({ colorize: true, destination: 1, sync: true }))
  return opts.destination !== undefined ? pino(base, opts.destination) : pino(base)
}
