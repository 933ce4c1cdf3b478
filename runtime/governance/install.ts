/**
 * The governance plane: the policy registry (built-in, plugin and scope types), the policy files,
 * the admission gate with its decision log, the MCP tool-call gate and the admin routes.
 */
import type { Area, Platform } from '../platform.js'
import { deny as denyDecision, TOOL_CALL_GATE, type DecisionEntry, type GovernancePolicy } from '../contracts/index.js'
import { scopePolicyFactory, scopePolicyForAgent, scopeRuntimeOf } from '../scope/index.js'
import { PostgresLog, countAndLogWriteFailures } from '../store/index.js'
import { POLICIES_PROPERTY } from './chain.js'
import { GovernanceDecisionLog } from './decision-log.js'
import { GovernanceMemorySink } from './memory-sink.js'
import { LmdbLessonStore, type Lesson, type LessonKey, type LessonStore } from './lesson-store.js'
import { PostgresLessonStore } from './postgres-lesson-store.js'
import { storeKindOf } from '../config/index.js'
import { bindPluginTypes } from './plugin-types.js'
import { installRoutes } from './routes.js'
import { installCommitmentRoutes } from './commitment-routes.js'
import { installCommitments } from './commitment-install.js'
import { describeRoutes } from './route-docs.js'
import { GovernanceService } from './service.js'
import { KillSwitchStates } from './kill-switch-states.js'
import { GovernanceSync } from './cluster-sync.js'
import { createToolCallGate } from './tool-gate.js'
import { decisionCounter } from './metrics.js'
import { KillSwitchPolicy } from './types/index.js'
import { GOVERNANCE } from './key.js'
import { GOVERNANCE_CONFIG_KEYS } from './config-keys.js'
import { GOVERNANCE_ERRORS } from './errors.js'

const LESSONS_KEY = 'platform.ai.governance.memory.store'

/** The store `platform.ai.governance.memory.store` names (`postgres` by default in cluster mode), started. */
async function lessonStore(platform: Platform): Promise<LessonStore> {
  if (storeKindOf(platform.config, LESSONS_KEY) !== 'postgres')
    return new LmdbLessonStore(platform.store.db<Lesson, LessonKey>('governance-memory'))
  const store = new PostgresLessonStore(await platform.postgres(`${LESSONS_KEY} is postgres`))
  await store.start()
  return store
}

export async function installGovernance(platform: Platform): Promise<GovernanceService | undefined> {
  const { config, logger } = platform
  const adminRoutes = config.get('platform.admin.enabled')
  // commitments follow their own flag: the fleet records dispatches whether or not policies run
  const commitments = installCommitments(platform)
  if (adminRoutes) installCommitmentRoutes(platform, commitments)
  if (!config.get('platform.ai.governance.enabled')) {
    if (adminRoutes) {
      installRoutes(platform, undefined)
      describeRoutes(platform.http)
    }
    return undefined
  }
  const log = logger.child({ area: 'governance' })
  const retention = config.get('platform.ai.governance.decision-log.retention')
  const onWriteFailure = countAndLogWriteFailures(platform.metrics.storeWriteFailures, log)
  const STORE_KEY = 'platform.ai.governance.decision-log.store'
  // in PostgreSQL every node lists every node's decisions; the ring keeps this node's newest
  const kind = storeKindOf(config, STORE_KEY)
  const shared =
    kind === 'postgres'
      ? new PostgresLog<DecisionEntry>({
          pg: platform.corePool.for(STORE_KEY),
          name: 'decisions',
          node: platform.node.id,
          retention,
          sharedField: 'context_snapshot',
          onWriteFailure
        })
      : undefined
  const db = (name: string) => (kind === 'lmdb' ? platform.store.db<DecisionEntry, [number, number]>(name) : undefined)
  const decisionLog = new GovernanceDecisionLog(
    config.get('platform.ai.governance.decision-log.capacity'),
    db('decisions'),
    retention,
    onWriteFailure,
    {
      db: db('decisions-anonymous'),
      keptPerSecond: config.get('platform.ai.governance.decision-log.anonymous-denied-per-second'),
      onDenied: platform.metrics.countAnonymousDenied('decisions')
    },
    shared,
    config.get('platform.ai.governance.decision-log.flush-ms')
  )
  // the decisions still waiting for their window are written before the store closes
  platform.onClose(() => decisionLog.written())
  const memory = config.get('platform.ai.governance.memory.enabled')
    ? new GovernanceMemorySink(
        await lessonStore(platform),
        config.get('platform.ai.governance.memory.ttl-seconds'),
        config.get('platform.ai.governance.memory.min-confidence')
      )
    : undefined
  const killSwitchStates = new KillSwitchStates(platform.store.db('governance-kill-switch'), log, platform.node.id)
  const service = new GovernanceService({
    logger: log,
    decisionLog,
    killSwitchStates,
    counters: platform.sharedCounters(),
    ...(memory !== undefined ? { memory } : {})
  })

  // YAML `type: scope` (runtime/scope): confines one agent (config `agent`) or every request
  const scopeRuntime = scopeRuntimeOf(platform)
  service.registry.register('scope', scopePolicyFactory(scopeRuntime), {
    origin: 'builtin',
    description:
      'confines an agent to its declared purpose (RULE_BASED, EMBEDDING_SIMILARITY, SEMANTIC_INTENT, LLM_CLASSIFIER)'
  })

  const syncPluginTypes = bindPluginTypes(service.registry, platform.plugins, log)
  // scopes agents declare (SDK `agent({scope})`) join the chain as `scope::<agent>`; a scope
  // that does not validate makes its agent deny everything rather than run unconfined
  const syncAgentScopes = (): void => {
    const scoped: GovernancePolicy[] = []
    for (const a of platform.plugins.agents()) {
      try {
        const p = scopePolicyForAgent(a, scopeRuntime)
        if (p !== null) scoped.push(p)
      } catch (err) {
        const reason = `agent '${a.name}' scope is invalid: ${(err as Error).message}`
        log.error({ agent: a.name, plugin: a.plugin }, reason)
        const d = denyDecision(reason)
        scoped.push({
          name: `scope::${a.name}`,
          source: `annotation:${a.name}`,
          version: a.version ?? '1.0',
          className: 'InvalidScopePolicy',
          agent: a.name,
          evaluate: (c) => (c.request.agentId === a.name ? d : { decision: 'admit' })
        })
      }
    }
    service.setSource('plugins:agent-scopes', scoped)
  }
  platform.bus.on('PluginsChanged', () => {
    syncPluginTypes()
    syncAgentScopes()
  })

  service.chain.onChange((chain) => {
    platform.properties.set(POLICIES_PROPERTY, chain)
  })
  // policies another component put in the property bag before governance started count as code
  const preset = platform.properties.get(POLICIES_PROPERTY)
  if (Array.isArray(preset)) for (const p of preset as GovernancePolicy[]) service.addPolicy(p)
  if (config.get('platform.ai.governance.kill-switch.enabled')) service.addPolicy(new KillSwitchPolicy())
  service.files.loadAll(config.get('platform.ai.governance.policy-files'))
  service.files.watch(config.get('platform.ai.governance.watch-interval-ms'))
  platform.onClose(() => {
    service.files.close()
  })
  syncAgentScopes()
  platform.properties.set(POLICIES_PROPERTY, service.chain.policies)
  // a single node has nobody to tell: its in-process backplane reaches no other process
  const backplane = platform.backplane()
  if (backplane.kind !== 'in-process') {
    const sync = new GovernanceSync({ backplane, service, states: killSwitchStates, logger: log })
    sync.start()
    platform.onClose(() => {
      sync.close()
    })
  }

  service.gate.observer = decisionCounter(platform.metrics)
  platform.extend(TOOL_CALL_GATE, createToolCallGate(service.gate))
  platform.provide(GOVERNANCE, service)
  if (adminRoutes) {
    installRoutes(platform, service)
    describeRoutes(platform.http)
  }
  return service
}

export const governanceArea: Area = {
  name: 'governance',
  errors: GOVERNANCE_ERRORS,
  dependsOn: ['scope'],
  configKeys: GOVERNANCE_CONFIG_KEYS,
  install: async (p) => {
    await installGovernance(p)
  }
}
