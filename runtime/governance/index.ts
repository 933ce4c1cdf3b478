/** The governance plane: policies, the admission gate, the decision log and their admin routes. */
export {
  admit,
  deny,
  transform,
  prefer,
  aiRequest,
  type Phase,
  type AiRequest,
  type PolicyContext,
  type PolicyDecision,
  type GovernancePolicy,
  type PolicyDescriptor,
  type PolicyFactory,
  type DecisionEntry,
  type DecisionValue,
  COMMITMENT_OUTCOMES,
  type CommitmentRecord,
  type CommitmentInput,
  type CommitmentLog,
  type CommitmentOutcome,
  type CommitmentProof,
  type LoggedCommitment
} from '../contracts/index.js'
export { GovernanceService, type ReloadResult } from './service.js'
export { PolicyFiles, type PolicyFileStatus } from './policy-files.js'
export { PolicyAdmissionGate, type Admission, type Preference, type PolicyIdentity, SPAN_NAME } from './gate.js'
export { PolicyChain, POLICIES_PROPERTY } from './chain.js'
export { PolicyRegistry, type TypeInfo } from './registry.js'
export { YamlPolicyParser, ParserRegistry, type PolicyParser } from './yaml-parser.js'
export { RulesPolicy, buildRulesPolicy } from './rules-policy.js'
export { GovernanceDecisionLog, type Subject } from './decision-log.js'
export {
  GovernanceMemorySink,
  MAX_LESSONS,
  CONFIDENCE,
  SUBJECT_DIMENSIONS,
  lessonText,
  namespaceKey,
  namespacesOf,
  type Fact,
  type Lesson,
  type Provenance
} from './memory-sink.js'
export { snapshotOf } from './audit-entry.js'
export { PolicyLoadError, PolicyConfigError } from './errors.js'
export { SwappablePolicy, DryRunPolicy } from './wrappers.js'
export { GuardrailAsPolicy, PolicyAsGuardrail, type AiGuardrail, type GuardrailResult } from './guardrails.js'
export { policyDigest } from './digest.js'
export { runCheck, type CheckRequest, type CheckResponse } from './check.js'
export { createToolCallGate, toolCallRequest, toolArgsPreview } from './tool-gate.js'
export { owaspMatrix, OWASP_ROWS } from './owasp.js'
export { complianceMatrix, agtVerify, COMPLIANCE } from './compliance.js'
export * from './types/index.js'
export { GOVERNANCE, COMMITMENTS, governanceOf } from './key.js'
export { SignedCommitmentLog, CommitmentError, isSigned, unsignedProof, recordedEventFields } from './commitment-log.js'
export {
  Ed25519Signer,
  signedBytes,
  keyIdOf,
  loadSigningKey,
  loadVerifyKey,
  verifySignature,
  publicJwk,
  type PublicJwk
} from './commitment-signer.js'
export { GOVERNANCE_ERRORS } from './errors.js'
