export { KillSwitchPolicy, KILL_SWITCH_DEFAULT_NAME, type KillSwitchState } from './kill-switch.js'
export { DenyListPolicy, AllowListPolicy, PreferencePolicy, TOOL_ARGS_BUDGET } from './text-match.js'
export { MessageLengthPolicy, RateLimitPolicy, ConcurrencyLimitPolicy, subjectOf } from './limits.js'
export {
  TimeWindowPolicy,
  MetadataPresencePolicy,
  AuthorizationPolicy,
  timeWindowFactory,
  rolesOf
} from './subject-checks.js'
export { PiiRedactionPolicy, CostCeilingPolicy, OutputLengthZScorePolicy } from './guardrails.js'
export { registerBuiltins } from './builtins.js'
