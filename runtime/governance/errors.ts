import { OperatorError } from '../config/index.js'

/** A policy document or entry that cannot be loaded; the message names the source and entry. */
export class PolicyLoadError extends OperatorError {
  constructor(message: string) {
    super(message)
    this.name = 'PolicyLoadError'
  }
}

/** A built-in type's `config:` block is wrong; the loader wraps it with the entry's name. */
export class PolicyConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PolicyConfigError'
  }
}
