/**
 * Policy documents fail closed on typos: a key no schema level knows (`default:` for
 * `defaults:`, `priorty:` for `priority:`) would otherwise be dropped and quietly allow
 * everything. Every map of a document is checked; the error names the key, the file, the line
 * and the closest known key.
 */
import { didYouMean } from '../config/index.js'
import { GOVERNANCE_ERRORS } from './errors.js'
import { PlatformError } from '../contracts/index.js'

type Path = readonly (string | number)[]

export class KeyChecker {
  constructor(
    readonly source: string,
    private readonly lineOf: (path: Path) => number | undefined = () => undefined
  ) {}

  /** Throws on the first key of `map` outside `allowed`; `where` says which map (e.g. `rules[2] ('x')`). */
  check(map: Record<string, unknown>, allowed: readonly string[], path: Path, where: string): void {
    for (const k of Object.keys(map)) {
      if (allowed.includes(k)) continue
      const line = this.lineOf([...path, k])
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
        detail: `unknown key '${k}' in ${where} of ${this.source}${line !== undefined ? ` line ${line}` : ''}${didYouMean(k, allowed)}; allowed: ${allowed.length > 0 ? allowed.join(', ') : 'none'}`
      })
    }
  }
}
