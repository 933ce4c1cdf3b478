/** Told about every failed LMDB write (or trim) of a retained log, with the log's name. */
export type WriteFailureReport = (log: string, err: unknown) => void

/** Where nothing is wired: a process warning, so a failure is never silent. */
export const warn: WriteFailureReport = (log, err) => {
  process.emitWarning(`store write failed (${log}): ${String((err as Error)?.message ?? err)}`, 'StoreWriteFailure')
}

/** Counts a failure in `counter` (label `log`) and logs it with the error. */
export function countAndLogWriteFailures(
  counter: { inc: (labels: { log: string }) => void },
  logger: { error: (obj: object, msg: string) => void }
): WriteFailureReport {
  return (log, err) => {
    counter.inc({ log })
    logger.error({ err, log }, 'store write failed')
  }
}
