/**
 * The live policy chain: policies from every source (code, YAML files, plugins and other areas),
 * merged in source order and de-duplicated by name (the first wins). Rebuilt when a source
 * changes; mirrored into the property bag under `org.platform.ai.governance.policies`.
 */
import type { Logger } from 'pino'
import type { GovernancePolicy } from '../contracts/index.js'
import { KillSwitchPolicy } from './types/index.js'
import { DryRunPolicy, SwappablePolicy } from './wrappers.js'

export const POLICIES_PROPERTY = 'org.platform.ai.governance.policies'

export class PolicyChain {
  private readonly sources = new Map<string, readonly GovernancePolicy[]>()
  private live: readonly GovernancePolicy[] = []
  private switches: readonly KillSwitchPolicy[] = []
  private readonly listeners: ((chain: readonly GovernancePolicy[]) => void)[] = []

  constructor(private readonly logger?: Logger) {}

  /** Sets (or replaces) the policies of one source; sources keep the order they were first set in. */
  setSource(id: string, policies: readonly GovernancePolicy[]): void {
    this.sources.set(id, [...policies])
    this.rebuild()
  }

  removeSource(id: string): void {
    if (this.sources.delete(id)) this.rebuild()
  }

  sourceIds(): string[] {
    return [...this.sources.keys()]
  }

  onChange(fn: (chain: readonly GovernancePolicy[]) => void): void {
    this.listeners.push(fn)
  }

  get policies(): readonly GovernancePolicy[] {
    return this.live
  }

  /** Installed kill switches (possibly inside dry-run or swappable wrappers: only direct ones count). */
  get killSwitches(): readonly KillSwitchPolicy[] {
    return this.switches
  }

  find(name: string): GovernancePolicy | undefined {
    return this.live.find((p) => p.name === name)
  }

  swappable(name: string): SwappablePolicy | undefined {
    for (const p of this.live) if (p instanceof SwappablePolicy && p.name === name) return p
    return undefined
  }

  dryRuns(): DryRunPolicy[] {
    return this.live.filter((p): p is DryRunPolicy => p instanceof DryRunPolicy)
  }

  private rebuild(): void {
    const seen = new Set<string>()
    const out: GovernancePolicy[] = []
    for (const [id, list] of this.sources) {
      for (const p of list) {
        if (seen.has(p.name)) {
          this.logger?.warn(
            { policy: p.name, source: p.source, from: id },
            `duplicate governance policy name '${p.name}' ignored (first definition wins)`
          )
          continue
        }
        seen.add(p.name)
        out.push(p)
      }
    }
    this.live = Object.freeze(out)
    this.switches = out.filter((p): p is KillSwitchPolicy => p instanceof KillSwitchPolicy)
    for (const fn of this.listeners) fn(this.live)
  }
}
