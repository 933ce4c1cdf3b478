/**
 * The built-in YAML policy parser. The root keys pick the schema: `policies:` (native) or
 * `rules:` (the third-party toolkit's document, one policy); both at once is an error.
 */
import type { Logger } from 'pino'
import { PlatformError, type GovernancePolicy } from '../contracts/index.js'
import { GOVERNANCE_ERRORS } from './errors.js'
import type { PolicyRegistry } from './registry.js'
import { buildRulesPolicy } from './rules-policy.js'
import { isMap, parseSafeYamlWithLines } from './safe-yaml.js'
import { KeyChecker } from './strict-keys.js'
import { DryRunPolicy, SwappablePolicy } from './wrappers.js'

/** A parser found by format (`yaml` ships; plugins may add `rego`, `cedar`, ...). */
export interface PolicyParser {
  readonly format: string
  parse(sourceLabel: string, text: string): GovernancePolicy[]
}

const ENTRY_KEYS = ['name', 'type', 'version', 'config', 'swappable', 'dry-run', 'description']
const NATIVE_ROOT_KEYS = ['version', 'policies']
// keys of either schema, for a document that has neither `policies` nor `rules` (a typo of one)
const ANY_ROOT_KEYS = ['version', 'name', 'description', 'policies', 'rules', 'defaults']

export class YamlPolicyParser implements PolicyParser {
  readonly format = 'yaml'

  constructor(
    private readonly registry: PolicyRegistry,
    private readonly logger?: Logger
  ) {}

  parse(source: string, text: string): GovernancePolicy[] {
    const parsed = parseSafeYamlWithLines(text, source)
    const doc = parsed.value
    const keys = new KeyChecker(source, (path) => parsed.lineOf(path))
    if (doc === null || doc === undefined) return []
    if (!isMap(doc))
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
        detail: `${source}: a policy document must be a map with 'policies' or 'rules'`
      })
    const hasRules = Object.hasOwn(doc, 'rules')
    const hasPolicies = Object.hasOwn(doc, 'policies')
    if (hasRules && hasPolicies)
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
        detail: `${source} has both 'rules' and 'policies' keys — pick one schema`
      })
    if (Object.hasOwn(doc, 'agent_control_specification_version'))
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
        detail: `${source}: ACS manifests are not supported; use the native 'policies:' or the 'rules:' schema`
      })
    if (hasRules) return [buildRulesPolicy(doc, source, this.logger, keys)]
    keys.check(
      doc,
      hasPolicies ? NATIVE_ROOT_KEYS : ANY_ROOT_KEYS,
      [],
      hasPolicies ? 'the policies document' : 'the policy document'
    )
    if (!hasPolicies || doc.policies === null) return []
    return this.native(doc, source, keys)
  }

  private native(doc: Record<string, unknown>, source: string, keys: KeyChecker): GovernancePolicy[] {
    if (!Array.isArray(doc.policies))
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
        detail: `'policies' must be a list in ${source}`
      })
    const docVersion = doc.version === undefined || doc.version === null ? undefined : String(doc.version)
    const out: GovernancePolicy[] = []
    const seen = new Set<string>()
    doc.policies.forEach((raw, i) => {
      const name = isMap(raw) && typeof raw.name === 'string' ? raw.name : ''
      const fail = (msg: string): never => {
        throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
          detail: `failed to build policies[${i}] ('${name}') in ${source}: ${msg}`
        })
      }
      if (!isMap(raw)) return fail('an entry must be a map of name, type, version, config')
      keys.check(raw, ENTRY_KEYS, ['policies', i], `policies[${i}] ('${name}')`)
      if (typeof raw.name !== 'string' || raw.name.trim() === '') fail("policy 'name' must not be blank")
      if (typeof raw.type !== 'string' || raw.type.trim() === '') fail("policy 'type' must not be blank")
      if (seen.has(name)) fail(`duplicate policy name '${name}' in this document`)
      seen.add(name)
      const ver =
        raw.version === undefined || raw.version === null || String(raw.version).trim() === ''
          ? (docVersion ?? 'embedded')
          : String(raw.version)
      if (raw.config !== undefined && raw.config !== null && !isMap(raw.config)) fail("'config' must be a map")
      const configKeys = this.registry.configKeys(raw.type as string)
      if (configKeys !== undefined && isMap(raw.config))
        keys.check(
          raw.config,
          configKeys,
          ['policies', i, 'config'],
          `the config of policies[${i}] ('${name}', type ${String(raw.type)})`
        )
      for (const flag of ['swappable', 'dry-run'])
        if (raw[flag] !== undefined && typeof raw[flag] !== 'boolean') fail(`'${flag}' must be true or false`)
      const descriptor = {
        name,
        source,
        version: ver,
        config: (raw.config as Record<string, unknown> | undefined) ?? {}
      }
      let policy: GovernancePolicy
      try {
        policy = this.registry.build(raw.type as string, descriptor)
      } catch (err) {
        return fail((err as Error).message)
      }
      if (raw['dry-run'] === true) policy = new DryRunPolicy(policy)
      if (raw.swappable === true) policy = new SwappablePolicy(name, source, ver, policy)
      out.push(policy)
    })
    return out
  }
}

/** Parsers by format, case-insensitive. */
export class ParserRegistry {
  private readonly parsers = new Map<string, PolicyParser>()
  register(p: PolicyParser): () => void {
    const key = p.format.toLowerCase()
    this.parsers.set(key, p)
    return () => {
      if (this.parsers.get(key) === p) this.parsers.delete(key)
    }
  }

  get(format: string): PolicyParser | undefined {
    return this.parsers.get(format.toLowerCase())
  }
  formats(): string[] {
    return [...this.parsers.keys()].sort()
  }
}
