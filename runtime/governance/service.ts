/**
 * The governance controller: registry, parsers, the live chain and its sources, the admission
 * gate, decision log and memory sink, and the operations the admin routes expose (reload, kill
 * switch, listings, health).
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Logger } from 'pino'
import { PlatformError, type GovernancePolicy, type SharedCounters } from '../contracts/index.js'
import { PolicyChain } from './chain.js'
import { GuardrailAsPolicy, type AiGuardrail } from './guardrails.js'
import { GovernanceDecisionLog } from './decision-log.js'
import { policyDigest } from './digest.js'
import { GOVERNANCE_ERRORS } from './errors.js'
import { PolicyAdmissionGate } from './gate.js'
import type { GovernanceMemorySink } from './memory-sink.js'
import { PolicyRegistry } from './registry.js'
import { KillSwitchPolicy, registerBuiltins, type KillSwitchState } from './types/index.js'
import { DryRunPolicy, SwappablePolicy, identityOf, type Identity } from './wrappers.js'
import { ParserRegistry, YamlPolicyParser } from './yaml-parser.js'
import { PolicyFiles } from './policy-files.js'
import type { KillSwitchStates } from './kill-switch-states.js'

export interface ServiceOptions {
  logger: Logger
  decisionLog: GovernanceDecisionLog
  memory?: GovernanceMemorySink
  /** Where kill-switch states are kept across restarts; memory only without it. */
  killSwitchStates?: KillSwitchStates
  /** What the rate and concurrency limits count on (this process's own counts by default). */
  counters?: SharedCounters
}

export interface ReloadResult {
  swapName: string
  outgoing: Identity
  incoming: Identity
  format: string
}

export class GovernanceService {
  readonly registry = new PolicyRegistry()
  readonly parsers = new ParserRegistry()
  readonly chain: PolicyChain
  readonly decisionLog: GovernanceDecisionLog
  readonly gate: PolicyAdmissionGate
  readonly memory: GovernanceMemorySink | undefined
  private readonly code: GovernancePolicy[] = []
  private readonly guardrails: GovernancePolicy[] = []
  readonly logger: Logger
  /** The configured policy files and their last load (see health). */
  readonly files: PolicyFiles
  private readonly killSwitchStates: KillSwitchStates | undefined
  private readonly reloadListeners: ((swapName: string, content: string, format: string) => void)[] = []

  constructor(opts: ServiceOptions) {
    this.logger = opts.logger
    this.files = new PolicyFiles(this, opts.logger)
    registerBuiltins(this.registry, opts.counters)
    this.parsers.register(new YamlPolicyParser(this.registry, opts.logger))
    this.chain = new PolicyChain(opts.logger)
    const states = (this.killSwitchStates = opts.killSwitchStates)
    // a switch joining the chain (the code one at install, one from a policy file) takes its stored state
    if (states !== undefined) this.chain.onChange(() => states.restore(this.chain.killSwitches))
    this.decisionLog = opts.decisionLog
    this.memory = opts.memory
    if (this.memory !== undefined) {
      const sink = this.memory
      this.decisionLog.onRecord((e) => {
        void sink.accept(e)?.catch((err: unknown) => {
          this.logger.warn({ err }, 'governance memory sink write failed')
        })
      })
    }
    this.gate = new PolicyAdmissionGate(this.chain, this.decisionLog, opts.logger)
    // guardrails first, then policies: their source is created first
    this.chain.setSource('guardrails', this.guardrails)
    this.chain.setSource('code', this.code)
  }

  /** Adds a guardrail; it runs before every policy, exposed through GuardrailAsPolicy. */
  addGuardrail(g: AiGuardrail): void {
    this.guardrails.push(new GuardrailAsPolicy(g))
    this.chain.setSource('guardrails', this.guardrails)
  }

  /** Adds a policy from code (source `code:<name>` by convention). */
  addPolicy(p: GovernancePolicy): void {
    this.code.push(p)
    this.chain.setSource('code', this.code)
  }

  /** Parses a document of a registered format; throws POLICY_LOAD_FAILED naming source and entry. */
  parse(format: string, source: string, text: string): GovernancePolicy[] {
    const parser = this.parsers.get(format)
    if (parser === undefined)
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
        detail: `no PolicyParser registered for format '${format}' — add a plugin or module that provides the '${format}' parser (known: [${this.parsers.formats().join(', ')}])`
      })
    return parser.parse(source, text)
  }

  /** Loads one policy file (source `yaml:<path>` as configured) into the chain; `content` when already read. */
  loadFile(path: string, content?: string): GovernancePolicy[] {
    const source = `yaml:${path}`
    let text: string
    try {
      text = content ?? readFileSync(resolve(path), 'utf8')
    } catch (err) {
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_LOAD_FAILED, {
        detail: `cannot read policy file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`
      })
    }
    const format = /\.(rego|cedar)$/i.exec(path)?.[1]?.toLowerCase() ?? 'yaml'
    const policies = this.parse(format, source, text)
    this.chain.setSource(source, policies)
    return policies
  }

  /** Sets the policies another area or a plugin contributes (source id e.g. `plugin:<name>`). */
  setSource(id: string, policies: readonly GovernancePolicy[]): void {
    this.chain.setSource(id, policies)
  }
  removeSource(id: string): void {
    this.chain.removeSource(id)
  }

  /** Called after each reload asked of this node (the cluster makes it on the other nodes). */
  onReload(fn: (swapName: string, content: string, format: string) => void): void {
    this.reloadListeners.push(fn)
  }

  /**
   * Hot-swaps the delegate of the swappable policy `swapName` with the first policy parsed from
   * `content`. `told`: another node made this reload, so it is not announced again.
   */
  reload(swapName: unknown, content: unknown, format: unknown, told = false): ReloadResult {
    if (typeof swapName !== 'string' || swapName.trim() === '')
      throw new PlatformError(GOVERNANCE_ERRORS.RELOAD_SWAP_NAME_BLANK)
    if (typeof content !== 'string' || content.trim() === '')
      throw new PlatformError(GOVERNANCE_ERRORS.RELOAD_CONTENT_BLANK)
    const fmt = typeof format === 'string' && format.trim() !== '' ? format.trim().toLowerCase() : 'yaml'
    const slot = this.chain.swappable(swapName)
    if (slot === undefined)
      throw new PlatformError(GOVERNANCE_ERRORS.RELOAD_UNKNOWN_SWAP, {
        detail: `no SwappablePolicy named '${swapName}' is installed`
      })
    const parser = this.parsers.get(fmt)
    if (parser === undefined)
      throw new PlatformError(GOVERNANCE_ERRORS.RELOAD_UNKNOWN_FORMAT, {
        detail: `no PolicyParser registered for format '${fmt}' — add a plugin or module that provides the '${fmt}' parser`
      })
    let parsed: GovernancePolicy[]
    try {
      parsed = parser.parse(`${fmt}:admin-reload:${swapName}`, content)
    } catch (err) {
      const msg = (err as Error).message
      throw new PlatformError(GOVERNANCE_ERRORS.RELOAD_PARSE_FAILED, {
        detail: msg.startsWith(`${fmt} parse failed: `) ? msg : `${fmt} parse failed: ${msg}`
      })
    }
    const incoming = parsed[0]
    if (incoming === undefined)
      throw new PlatformError(GOVERNANCE_ERRORS.RELOAD_EMPTY, {
        detail: `${fmt} artifact yielded zero policies — reload aborted`
      })
    const outgoing = slot.swap(incoming)
    this.logger.info(
      { swapName, outgoing: identityOf(outgoing), incoming: identityOf(incoming) },
      `governance policy '${swapName}' hot-reloaded`
    )
    if (!told) for (const fn of this.reloadListeners) fn(swapName, content, fmt)
    return { swapName, outgoing: identityOf(outgoing), incoming: identityOf(incoming), format: fmt }
  }

  /** The first installed kill switch, if any. */
  killSwitch(): KillSwitchPolicy | undefined {
    return this.chain.killSwitches[0]
  }

  /** Arms `ks` at once; resolves when the state is durable (when the service keeps states). */
  armKillSwitch(ks: KillSwitchPolicy, reason: string, operator: string, principal: string): Promise<KillSwitchState> {
    if (this.killSwitchStates === undefined) return Promise.resolve(ks.arm(reason, operator, principal))
    return this.killSwitchStates.arm(ks, reason, operator, principal)
  }

  /** Disarms `ks`; resolves when the state is durable (when the service keeps states). */
  disarmKillSwitch(ks: KillSwitchPolicy): Promise<KillSwitchState> {
    if (this.killSwitchStates === undefined) return Promise.resolve(ks.disarm())
    return this.killSwitchStates.disarm(ks)
  }

  listing(): Record<string, unknown>[] {
    return this.chain.policies.map((p) => {
      const inner = p instanceof DryRunPolicy ? p.delegate : p
      const rec: Record<string, unknown> = {
        name: p.name,
        source: p.source,
        version: p.version,
        className: p.className,
        digest: policyDigest(inner.name, inner.source, inner.version)
      }
      if (p instanceof KillSwitchPolicy) {
        const s = p.state()
        rec.armed = s.armed
        if (s.armed) {
          rec.armedReason = s.reason
          rec.armedAt = s.armedAt
          rec.armedBy = s.principal
        }
      }
      if (p instanceof DryRunPolicy) {
        Object.assign(rec, {
          dryRun: true,
          wrappedPolicyName: p.delegate.name,
          shadowAdmits: p.counters.admits,
          shadowDenies: p.counters.denies,
          shadowTransforms: p.counters.transforms,
          delegateErrors: p.counters.errors
        })
      }
      if (p instanceof SwappablePolicy) Object.assign(rec, { swappable: true, delegateVersion: p.delegate.version })
      return rec
    })
  }

  summary(): { policyCount: number; sources: string[] } {
    const ps = this.chain.policies
    return { policyCount: ps.length, sources: [...new Set(ps.map((p) => p.source))] }
  }

  health(): Record<string, unknown> {
    const ks = this.killSwitch()
    const killSwitch: KillSwitchState = ks === undefined ? { armed: false } : ks.state()
    return {
      generatedAt: new Date().toISOString(),
      killSwitch,
      policies: this.chain.policies.map((p) => {
        const inner = p instanceof DryRunPolicy ? p.delegate : p
        return {
          name: inner.name,
          source: inner.source,
          version: inner.version,
          digest: policyDigest(inner.name, inner.source, inner.version)
        }
      }),
      dryRuns: this.chain.dryRuns().map((d) => ({ wrappedPolicyName: d.delegate.name, ...d.counters })),
      slos: [],
      policyFiles: this.files.status()
    }
  }
}
