import type { AiRequest } from '../contracts/index.js'
import type { ScopeConfig, ScopeGuardrail, ScopeVerdict, Tier } from './contract.js'
import { judgeNoul, MAX_STATE_CHARS, type Answer, type NoulQuestion } from './decision-model.js'
import { IN_SCOPE_UNSCORED, screenedText } from './rule-based.js'
import type { PluginClassifier, ScopeRuntime } from './scope-runtime.js'
import { booleanSystemProperty, LLM_FAIL_OPEN_PROPERTY } from './system-properties.js'

const OUTCOMES = new Set(['IN_SCOPE', 'OUT_OF_SCOPE', 'ERROR'])

/**
 * LLM_CLASSIFIER tier: one typed boolean question per request ("off-topic, or touches a forbidden
 * topic?") through the decision model, mapped by `judgeNoul`. Fails closed (rule 3 of docs/scope.md):
 * every uncertain verdict (the 0.2-0.5 band, `false` with no confidence, timeout, no capacity,
 * empty, unparseable, out-of-set or refused reply, no reachable model) is ERROR, which the scope
 * policy denies, unless fail-open: the constructor argument, else the process property
 * `org.platform.ai.scope.llm-classifier.fail-open`, read on each uncertain verdict.
 *
 * When a plugin classifier is selected it answers instead of the decision model; its IN_SCOPE and
 * OUT_OF_SCOPE verdicts stand, anything else (ERROR, a throw, a timeout, junk) is uncertain.
 */
export class LlmClassifierScopeGuardrail implements ScopeGuardrail {
  constructor(
    private readonly runtime: ScopeRuntime,
    private readonly failOpen?: boolean
  ) {
    if (failOpen === true)
      runtime.logger.warn(
        'LlmClassifierScopeGuardrail is fail-open: an uncertain, failed or timed-out scope verdict admits the request'
      )
  }

  tier(): Tier {
    return 'LLM_CLASSIFIER'
  }

  async evaluate(request: AiRequest, scope: ScopeConfig): Promise<ScopeVerdict> {
    const message = screenedText(request, scope)
    if (message === undefined) return IN_SCOPE_UNSCORED
    const plugin = this.runtime.pluginClassifier()
    if (plugin !== undefined) return await this.viaPlugin(plugin, request, scope)
    const model = this.runtime.decisionModel()
    if (model === undefined || !model.isAvailable()) {
      this.runtime.logger.warn(
        { tier: 'LLM_CLASSIFIER' },
        'No decision model can answer; the LLM scope classifier cannot clear the request. Set platform.ai.scope.classifier.'
      )
      return this.uncertain('no decision model available')
    }
    if (message.length > MAX_STATE_CHARS)
      return this.uncertain(
        `request of ${message.length} chars exceeds the ${MAX_STATE_CHARS}-char decision state bound`
      )
    let answer: Answer
    try {
      answer = await model.decide(message, scopeQuestion(scope), this.runtime.decisionTimeoutMs)
    } catch (err) {
      this.runtime.logger.error({ model: model.name, err: (err as Error)?.message }, 'LLM scope classifier call failed')
      answer = { kind: 'failed', reason: 'error', detail: (err as Error)?.message ?? String(err) }
    }
    const v = judgeNoul(answer, 'off-topic')
    if (v.outcome === 'FLAGGED')
      return {
        outcome: 'OUT_OF_SCOPE',
        reason: `LLM classifier rejected as off-topic: ${v.reason}`,
        similarity: Number.NaN
      }
    if (v.outcome === 'CLEAR') return IN_SCOPE_UNSCORED
    return this.uncertain(v.reason)
  }

  private async viaPlugin(c: PluginClassifier, request: AiRequest, scope: ScopeConfig): Promise<ScopeVerdict> {
    let raw: unknown
    try {
      raw = await c.classify(request, scope, AbortSignal.timeout(this.runtime.decisionTimeoutMs))
    } catch (err) {
      return this.uncertain(`classifier '${c.name}' failed: ${(err as Error)?.message ?? String(err)}`)
    }
    const v = raw as Partial<ScopeVerdict> | null
    if (v === null || typeof v !== 'object' || typeof v.outcome !== 'string' || !OUTCOMES.has(v.outcome)) {
      return this.uncertain(`classifier '${c.name}' returned an invalid verdict`)
    }
    const reason = typeof v.reason === 'string' ? v.reason : ''
    const similarity = typeof v.similarity === 'number' ? v.similarity : Number.NaN
    if (v.outcome === 'IN_SCOPE') return { outcome: 'IN_SCOPE', reason, similarity }
    if (v.outcome === 'OUT_OF_SCOPE')
      return {
        outcome: 'OUT_OF_SCOPE',
        reason: `classifier '${c.name}' rejected as off-topic${reason !== '' ? ': ' + reason : ''}`,
        similarity
      }
    return this.uncertain(`classifier '${c.name}' errored${reason !== '' ? ': ' + reason : ''}`)
  }

  private uncertain(reason: string): ScopeVerdict {
    if (this.failOpen ?? booleanSystemProperty(LLM_FAIL_OPEN_PROPERTY)) {
      this.runtime.logger.warn(
        { tier: 'LLM_CLASSIFIER', reason },
        'LLM scope classifier uncertain: admitting (fail-open mode)'
      )
      return { outcome: 'IN_SCOPE', reason: `fail-open: LLM scope classifier ${reason}`, similarity: Number.NaN }
    }
    return { outcome: 'ERROR', reason: `LLM scope classifier ${reason}`, similarity: Number.NaN }
  }
}

const questions = new WeakMap<ScopeConfig, NoulQuestion>()

/** The boolean question for a scope; `true` means off-topic. Built once per (frozen) config. */
export function scopeQuestion(scope: ScopeConfig): NoulQuestion {
  let q = questions.get(scope)
  if (q === undefined) {
    q = buildQuestion(scope)
    if (Object.isFrozen(scope)) questions.set(scope, q)
  }
  return q
}

function buildQuestion(scope: ScopeConfig): NoulQuestion {
  let prompt =
    "You are a scope classifier for an AI assistant endpoint. Decide whether the user's REQUEST (the STATE) falls outside the endpoint's declared purpose or touches a forbidden topic.\n\n" +
    `The endpoint's declared purpose is:\n  ${scope.purpose}\n`
  const topics = scope.forbiddenTopics.filter((t) => typeof t === 'string' && t.trim() !== '')
  if (topics.length > 0)
    prompt +=
      '\nTopics that are off-topic even when the purpose could admit them:\n' + topics.map((t) => `  - ${t}\n`).join('')
  return {
    prompt,
    whenTrue: 'the request is off-topic for the declared purpose, or touches any forbidden topic',
    whenFalse: 'the request falls within the declared purpose and touches no forbidden topic'
  }
}
