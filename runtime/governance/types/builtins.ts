import type { PolicyRegistry } from '../registry.js'
import { denyListFactory, allowListFactory, preferenceFactory } from './text-match.js'
import { messageLengthFactory, rateLimitFactory, concurrencyLimitFactory } from './limits.js'
import { timeWindowFactory, metadataPresenceFactory, authorizationFactory } from './subject-checks.js'
import { piiRedactionFactory, costCeilingFactory, outputLengthZScoreFactory } from './guardrails.js'
import { killSwitchFactory } from './kill-switch.js'

/** The thirteen built-in types (the reference registers thirteen; its docs say twelve and omit kill-switch). */
export function registerBuiltins (r: PolicyRegistry): void {
  const b = (type: string, f: Parameters<PolicyRegistry['register']>[1], description: string): void => { r.register(type, f, { origin: 'builtin', description }) }
  b('pii-redaction', piiRedactionFactory, 'redacts (or blocks) email, phone, card, SSN and IPv4 in requests; denies them in responses')
  b('cost-ceiling', costCeilingFactory, 'denies a tenant whose reported spend reached budget-usd')
  b('output-length-zscore', outputLengthZScoreFactory, 'denies responses whose length drifts beyond z-threshold')
  b('deny-list', denyListFactory, 'denies messages, responses and tool arguments matching phrases or regex')
  b('allow-list', allowListFactory, 'admits only messages matching a phrase or regex')
  b('preference', preferenceFactory, 'records a soft Prefer advisory when a phrase or regex matches')
  b('message-length', messageLengthFactory, 'denies messages longer than max-chars')
  b('rate-limit', rateLimitFactory, 'sliding-window request limit per subject')
  b('concurrency-limit', concurrencyLimitFactory, 'in-flight turn limit per subject')
  b('time-window', (d) => timeWindowFactory(d), 'admits only inside a daily time window')
  b('metadata-presence', metadataPresenceFactory, 'denies requests missing required metadata keys')
  b('authorization', authorizationFactory, 'denies subjects lacking required roles')
  b('kill-switch', killSwitchFactory, 'denies everything while armed')
}
