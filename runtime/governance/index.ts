/** The governance plane: policies, the admission gate, the decision log and their admin routes. */
export { GovernanceService } from './service.js'
export { type Admission } from './gate.js'
export { buildRulesPolicy } from './rules-policy.js'
export { GovernanceDecisionLog, type Subject } from './decision-log.js'
export { GovernanceMemorySink, SUBJECT_DIMENSIONS, lessonText, namespaceKey } from './memory-sink.js'
export { GOVERNANCE, COMMITMENTS, governanceOf } from './key.js'
export { recordedEventFields } from './commitment-log.js'
