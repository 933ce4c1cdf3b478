import type { SharedCounters } from '../../contracts/index.js'
import { InProcessCounters } from '../../store/index.js'
import type { PolicyRegistry } from '../registry.js'
import { denyListFactory, allowListFactory, preferenceFactory } from './text-match.js'
import { messageLengthFactory, rateLimitFactory, concurrencyLimitFactory } from './limits.js'
import { timeWindowFactory, metadataPresenceFactory, authorizationFactory } from './subject-checks.js'
import { piiRedactionFactory, costCeilingFactory, outputLengthZScoreFactory } from './guardrails.js'
import { killSwitchFactory } from './kill-switch.js'

/** The thirteen built-in types, kill-switch included; the limits count on `counters`. */
export function registerBuiltins(r: PolicyRegistry, counters: SharedCounters = new InProcessCounters()): void {
  // configKeys: a misspelt optional key (`zones:` for `zone:`) is an error, not a silent default
  const b = (
    type: string,
    f: Parameters<PolicyRegistry['register']>[1],
    description: string,
    configKeys: readonly string[]
  ): void => {
    r.register(type, f, { origin: 'builtin', description, configKeys })
  }
  b(
    'pii-redaction',
    piiRedactionFactory,
    'redacts (or blocks) email, phone, card, SSN and IPv4 in requests; denies them in responses',
    ['mode']
  )
  b('cost-ceiling', costCeilingFactory, 'denies a tenant whose reported spend reached budget-usd', ['budget-usd'])
  b('output-length-zscore', outputLengthZScoreFactory, 'denies responses whose length drifts beyond z-threshold', [
    'window-size',
    'z-threshold',
    'min-samples'
  ])
  b('deny-list', denyListFactory, 'denies messages, responses and tool arguments matching phrases or regex', [
    'phrases',
    'regex'
  ])
  b('allow-list', allowListFactory, 'admits only messages matching a phrase or regex', ['phrases', 'regex'])
  b('preference', preferenceFactory, 'records a soft Prefer advisory when a phrase or regex matches', [
    'phrases',
    'regex',
    'prefer',
    'reason'
  ])
  b('message-length', messageLengthFactory, 'denies messages longer than max-chars', ['max-chars'])
  b('rate-limit', rateLimitFactory(counters), 'sliding-window request limit per subject', ['limit', 'window-seconds'])
  b('concurrency-limit', concurrencyLimitFactory(counters), 'in-flight turn limit per subject', ['max-concurrent'])
  b('time-window', (d) => timeWindowFactory(d), 'admits only inside a daily time window', [
    'start',
    'end',
    'zone',
    'days'
  ])
  b('metadata-presence', metadataPresenceFactory, 'denies requests missing required metadata keys', ['required-keys'])
  b('authorization', authorizationFactory, 'denies subjects lacking required roles', ['required-roles'])
  b('kill-switch', killSwitchFactory, 'denies everything while armed', [])
}
