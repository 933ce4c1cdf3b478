import t from 'tap'
import fc from 'fast-check'
import { aiRequest } from '../../runtime/contracts/index.js'
import { scopeFromPolicyConfig, scopeFromAgentAttributes, TIERS, BREACHES } from '../../runtime/scope/scope-config.js'
import { parseAnswer } from '../../runtime/scope/openai-decision-model.js'
import { judgeNoul } from '../../runtime/scope/decision-model.js'
import { RuleBasedScopeGuardrail } from '../../runtime/scope/rule-based.js'
import { OpenAiEmbedder } from '../../runtime/scope/openai-embedder.js'
import { OpenAiServer } from '../helpers/openai-server.js'

// Generated inputs for everything that parses outside data: scope configs, model replies,
// embedding replies and messages. Each either yields a well-formed result or a clear error.
const keys = [
  'agent',
  'purpose',
  'forbidden-topics',
  'on-breach',
  'redirect-message',
  'tier',
  'similarity-threshold',
  'unrestricted',
  'justification',
  'post-response-check',
  'typo'
]
const value = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.double(),
  fc.integer(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.constantFrom(...TIERS, ...BREACHES, 'p')
)

t.test('scope configs: a frozen, valid config or SCOPE_CONFIG_INVALID, nothing else', async (t) => {
  fc.assert(
    fc.property(fc.dictionary(fc.constantFrom(...keys), value), (raw) => {
      let c
      try {
        c = scopeFromPolicyConfig(raw).config
      } catch (err) {
        return (
          (err as { code?: unknown }).code === 'PLT_ERR_SCOPE_CONFIG_INVALID' &&
          (err as Error).message.startsWith('scope: ')
        )
      }
      return (
        Object.isFrozen(c) &&
        TIERS.includes(c.tier) &&
        BREACHES.includes(c.onBreach) &&
        c.similarityThreshold >= 0 &&
        c.similarityThreshold <= 1 &&
        (c.unrestricted ? c.justification.trim() !== '' : c.purpose !== '') &&
        c.redirectMessage.trim() !== ''
      )
    }),
    { numRuns: 2000 }
  )
  fc.assert(
    fc.property(fc.anything(), (raw) => {
      try {
        scopeFromAgentAttributes(raw, 'a')
        return true
      } catch (err) {
        return (err as { code?: unknown }).code === 'PLT_ERR_SCOPE_CONFIG_INVALID'
      }
    }),
    { numRuns: 1000 }
  )
  t.pass('held')
})

t.test('model replies: always an answer or a failure, and the gate always decides', async (t) => {
  const reply = fc.oneof(
    fc.string(),
    fc.json(),
    fc.record({ answer: fc.anything(), confidence: fc.anything() }).map((o) => JSON.stringify(o))
  )
  fc.assert(
    fc.property(reply, (text) => {
      const a = parseAnswer(text)
      const v = judgeNoul(a, 'off-topic')
      if (a.kind === 'noul' && a.confidence !== null && (a.confidence < 0 || a.confidence > 1)) return false
      return (
        ['FLAGGED', 'CLEAR', 'UNCERTAIN'].includes(v.outcome) &&
        (v.outcome !== 'CLEAR' || (a.kind === 'noul' && a.value === false))
      )
    }),
    { numRuns: 3000 }
  )
  t.pass('held')
})

t.test('rule-based tier: any message, a verdict', async (t) => {
  const g = new RuleBasedScopeGuardrail()
  const scope = scopeFromAgentAttributes({ purpose: 'Orders', forbiddenTopics: ['gambling', 'c++'] })
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), (message) => {
      const v = g.evaluate(aiRequest({ message }), scope)
      return v.outcome === 'IN_SCOPE' || (v.outcome === 'OUT_OF_SCOPE' && v.reason.length > 0)
    }),
    { numRuns: 3000 }
  )
  t.pass('held')
})

t.test('embedding replies: vectors or EMBEDDER_FAILED', async (t) => {
  const server = await new OpenAiServer().start()
  t.teardown(() => server.close())
  const e = new OpenAiEmbedder({ baseUrl: server.url, model: 'm', timeoutMs: 2000 })
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.json(), fc.string()), async (body) => {
      server.embeddings = () => ({ raw: body })
      try {
        const out = await e.embed(['a', 'b'])
        return (
          out.length === 2 &&
          out.every((v) => Array.isArray(v) && v.length > 0 && v.every(Number.isFinite)) &&
          out[0]!.length === out[1]!.length
        )
      } catch (err) {
        return (err as { code?: unknown }).code === 'PLT_ERR_EMBEDDER_FAILED'
      }
    }),
    { numRuns: 150 }
  )
  t.pass('held')
})
