/**
 * A mistake the operator can fix (configuration, a policy file, a port in use, a plugin
 * directory): the CLI prints its message as one line and exits 78 (EX_CONFIG), no stack trace.
 */
export class OperatorError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'OperatorError'
  }
}

/** EX_CONFIG from sysexits.h: the exit code of every OperatorError. */
export const EX_CONFIG = 78
