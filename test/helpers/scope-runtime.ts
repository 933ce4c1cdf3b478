import { Writable } from 'node:stream'
import { createLogger } from '../../runtime/observability/index.js'
import type { ScopeRuntime, PluginClassifier } from '../../runtime/scope/scope-runtime.js'
import type { Embedder } from '../../runtime/scope/contract.js'
import type { DecisionModel } from '../../runtime/scope/decision-model.js'
import { DEFAULT_DECISION_TIMEOUT_MS } from '../../runtime/scope/decision-model.js'

/** A scope runtime over the given parts, logging into an array the test can read. */
export function testRuntime(
  parts: {
    embedder?: Embedder
    decisionModel?: DecisionModel
    pluginClassifier?: PluginClassifier
    decisionTimeoutMs?: number
  } = {}
): ScopeRuntime & { logs: Record<string, any>[] } {
  const logs: Record<string, any>[] = []
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line))
      cb()
    }
  })
  return {
    logs,
    logger: createLogger('debug', { destination: sink, pretty: false }),
    embedder: () => parts.embedder,
    decisionModel: () => parts.decisionModel,
    pluginClassifier: () => parts.pluginClassifier,
    decisionTimeoutMs: parts.decisionTimeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS
  }
}

/** Log lines at warn (40) or above whose message contains `text`. */
export function warned(logs: Record<string, any>[], text: string): boolean {
  return logs.some((l) => l.level >= 40 && typeof l.msg === 'string' && l.msg.includes(text))
}
