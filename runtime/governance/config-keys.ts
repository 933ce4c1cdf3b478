/**
 * The configuration keys the governance area (policy files, decision log, lessons, commitment
 * records, kill switch) owns; `runtime/areas.ts` gathers them with the others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

const { bool, str, positiveInt, strList } = KEY_SCHEMA

export const GOVERNANCE_CONFIG_KEYS = {
  'platform.ai.governance.policy-files': {
    schema: strList,
    default: [],
    description: 'YAML policy files loaded at start-up'
  },
  'platform.ai.governance.watch-interval-ms': {
    schema: { type: 'integer', minimum: 0 },
    default: 1000,
    description:
      "How often the policy files are checked for edits (an edit that loads replaces that file's policies, one that does not is logged and shown in health); 0 turns watching off"
  },
  'platform.ai.governance.decision-log.capacity': {
    schema: positiveInt,
    default: 500,
    description: 'Decision log entries kept in memory'
  },
  'platform.ai.governance.decision-log.flush-ms': {
    schema: { type: 'integer', minimum: 0, maximum: 60_000 },
    default: 10,
    description:
      'How long recorded decisions wait for more before they are written to the data directory together (0: at the end of each event-loop turn; at most 8192 decisions wait, past that they are written at once, so under load the wait is shorter). Each write is a commit, whose cost is paid per write, not per decision; an acknowledged turn (an interaction answered 200) has its decisions written before the answer whatever this is'
  },
  'platform.ai.governance.memory.enabled': {
    schema: bool,
    default: false,
    description: 'Persist deny and prefer lessons across restarts'
  },
  'platform.ai.governance.memory.store': {
    schema: { enum: ['lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      "Where the memory sink keeps lessons and operators' facts: `lmdb` (the data directory) or `postgres` (shared by every node on `platform.postgres.url`). In cluster mode the default is `postgres`"
  },
  'platform.ai.governance.memory.ttl-seconds': {
    schema: { type: 'integer', minimum: 0 },
    default: 0,
    description: 'Lesson expiry; 0 means none'
  },
  'platform.ai.governance.memory.min-confidence': {
    schema: { type: 'number', minimum: 0, maximum: 1 },
    default: 0.0,
    description: 'Read-gate floor: lessons below it are dropped on read'
  },
  'platform.ai.governance.enabled': {
    schema: bool,
    default: true,
    description:
      'Run the governance plane (policy chain, tool-call gate); when false the routes answer as if no controller were installed'
  },
  'platform.ai.governance.decision-log.retention': {
    schema: positiveInt,
    default: 100_000,
    description: 'Decision log entries kept in LMDB, or in PostgreSQL for all nodes together (oldest trimmed)'
  },
  'platform.ai.governance.decision-log.store': {
    schema: { enum: ['memory', 'lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      "Where the decision log is kept: `lmdb` (this node's data directory), `postgres` (`platform.postgres.url`: every node lists every node's decisions, each with its `node`) or `memory` (the newest `platform.ai.governance.decision-log.capacity`, lost on restart). In cluster mode the default is `postgres`"
  },
  'platform.ai.governance.decision-log.anonymous-denied-per-second': {
    schema: { type: 'integer', minimum: 0 },
    default: 10,
    description:
      'Deny decisions of anonymous turns kept per second (every one is counted); anonymous turns are logged apart from authenticated ones, which they never push out'
  },
  'platform.ai.governance.commitment-records.store': {
    schema: { enum: ['memory', 'lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      "Where commitment records are kept: `lmdb` (this node's data directory), `postgres` (`platform.postgres.url`: every node lists every record; deploy the same key file to every node so each verifies the others' signatures) or `memory` (the newest 500, lost on restart). In cluster mode the default is `postgres`"
  },
  'platform.ai.governance.commitment-records.enabled': {
    schema: bool,
    default: false,
    description:
      'Keep signed commitment records of agent dispatches (Ed25519 over the JCS form of the record without proof) and list them at GET /api/admin/governance/commitments'
  },
  'platform.ai.governance.commitment-records.key-file': {
    schema: str,
    default: '',
    description:
      'PKCS#8 PEM Ed25519 private key that signs commitment records; empty: <data-dir>/commitment-signing-key.pem, generated with mode 0600 on first start. A configured file must exist, and a key that does not load stops start-up'
  },
  'platform.ai.governance.commitment-records.verify-key-files': {
    schema: strList,
    default: [],
    description:
      'PEM files of earlier commitment signing keys (public SPKI or the PKCS#8 key itself): published beside the current key, so records they signed keep verifying after a key change'
  },
  'platform.ai.governance.commitment-records.retention': {
    schema: positiveInt,
    default: 100_000,
    description: 'Commitment records kept in LMDB, or in PostgreSQL for all nodes together (oldest trimmed)'
  },
  'platform.ai.governance.kill-switch.enabled': {
    schema: bool,
    default: false,
    description:
      'Install a kill switch from code (source `code:KillSwitchPolicy`) even when no policy file declares one'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof GOVERNANCE_CONFIG_KEYS> {}
}
