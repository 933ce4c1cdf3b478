/**
 * PolicyRegistry: YAML `type:` names (case-insensitive) to factories receiving the descriptor.
 * Built-ins are registered at construction; plugins and the scope area add theirs.
 */
import { PlatformError, type GovernancePolicy, type PolicyDescriptor, type PolicyFactory } from '../contracts/index.js'
import { GOVERNANCE_ERRORS } from './errors.js'

export interface TypeInfo {
  type: string
  /** `builtin`, `plugin:<name>` or `code`. */
  origin: string
  description: string
  /** Keys `config:` may hold; unset (plugin and code types) means the type checks its own config. */
  configKeys?: readonly string[]
}

export class PolicyRegistry {
  private readonly factories = new Map<string, { factory: PolicyFactory; info: TypeInfo }>()

  register(type: string, factory: PolicyFactory, info: Partial<Omit<TypeInfo, 'type'>> = {}): void {
    if (typeof type !== 'string' || type.trim() === '') throw new Error('type must not be blank')
    const key = type.toLowerCase()
    this.factories.set(key, {
      factory,
      info: {
        type: key,
        origin: info.origin ?? 'code',
        description: info.description ?? '',
        ...(info.configKeys !== undefined ? { configKeys: info.configKeys } : {})
      }
    })
  }

  /** The `config:` keys of `type`, when the type declares them. */
  configKeys(type: string): readonly string[] | undefined {
    return this.factories.get(type.toLowerCase())?.info.configKeys
  }

  unregister(type: string): boolean {
    return this.factories.delete(type.toLowerCase())
  }

  has(type: string): boolean {
    return this.factories.has(type.toLowerCase())
  }

  origin(type: string): string | undefined {
    return this.factories.get(type.toLowerCase())?.info.origin
  }

  types(): TypeInfo[] {
    return [...this.factories.values()].map((f) => f.info).sort((a, b) => a.type.localeCompare(b.type))
  }

  /** Builds a policy; an unknown type fails (fail closed at parse time, never a silent drop). */
  build(type: string, d: PolicyDescriptor): GovernancePolicy {
    const f = this.factories.get(type.toLowerCase())
    if (f === undefined)
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
        detail: `unknown policy type '${type}' (known: [${[...this.factories.keys()].sort().join(', ')}])`
      })
    return f.factory(d)
  }
}
