/**
 * OWASP Top 10 for Agentic Applications (ASI01–ASI10, December 2025): an honest self-assessment
 * of THIS platform, not of what a deployment could add. Every evidence pointer names a file and
 * a test in this repository and a string (`consumer_grep`) the file must contain;
 * test/governance/owasp.test.ts checks each pointer.
 */
export type Coverage = 'COVERED' | 'PARTIAL' | 'DESIGN' | 'NOT_ADDRESSED'
export const COVERAGE_LEVELS: readonly Coverage[] = ['COVERED', 'PARTIAL', 'DESIGN', 'NOT_ADDRESSED']

export interface Evidence {
  class: string
  test: string | null
  consumer_grep: string
  description: string
}
export interface MatrixRow {
  id: string
  title: string
  description: string
  coverage: Coverage
  notes: string
  evidence: Evidence[]
}

const ev = (file: string, test: string | null, grep: string, description: string): Evidence => ({
  class: file,
  test,
  consumer_grep: grep,
  description
})

export const OWASP_FRAMEWORK = 'OWASP Top 10 for Agentic Applications (December 2025)'

export const OWASP_ROWS: readonly MatrixRow[] = [
  {
    id: 'ASI01',
    title: 'Agent Goal Hijack',
    coverage: 'PARTIAL',
    description: 'Inputs that redirect an agent away from its goal (prompt injection, instruction override).',
    notes:
      "Per-agent scope confinement (rule-based forbidden topics and hijacking probes; embedding, semantic-intent and LLM-classifier tiers when an embedder or model is configured; a confinement preamble on the system prompt), deny-list phrases and regexes, and rules-schema `matches` conditions (the toolkit's ASI01 templates load with their (?i) flags). The built-in offline embedder is lexical, and no model-based injection detector ships: paraphrased or encoded attacks pass the offline tiers.",
    evidence: [
      ev(
        'runtime/governance/types/text-match.ts',
        'test/governance/builtin-types.test.ts',
        'class DenyListPolicy',
        'deny-list screens the message, the response and tool arguments'
      ),
      ev(
        'runtime/governance/rule-operators.ts',
        'test/governance/rules.test.ts',
        'compileToolkitRegex',
        'toolkit rules with (?i) regexes compiled at load'
      ),
      ev(
        'runtime/scope/rule-based.ts',
        'test/scope/rule-based.test.ts',
        'HIJACKING_PROBES',
        'forbidden topics and built-in hijacking probes'
      ),
      ev(
        'runtime/governance/install.ts',
        'test/governance/scope-type.test.ts',
        "registry.register('scope'",
        'YAML type: scope and agent-declared scopes in the chain'
      )
    ]
  },
  {
    id: 'ASI02',
    title: 'Tool Misuse and Exploitation',
    coverage: 'COVERED',
    description: 'Agents invoking tools in unsafe ways or with attacker-controlled arguments.',
    notes:
      'Every MCP tools/call passes the tool-call gate governance adds at TOOL_CALL_GATE, which runs the whole chain on a call_tool:<name> request carrying tool_name, tool_args and a preview; rules can match tool_name and deny-list screens arguments recursively within a 1 Mi-character budget.',
    evidence: [
      ev(
        'runtime/governance/tool-gate.ts',
        'test/governance/tool-gate.test.ts',
        'call_tool:',
        'tool-call gate builds the governed request'
      ),
      ev(
        'runtime/contracts/tool-call.ts',
        'test/governance/tool-gate.test.ts',
        'TOOL_CALL_GATE',
        'the seam the MCP server calls before every tool'
      ),
      ev(
        'runtime/mcp/calls.ts',
        'test/governance/e2e.test.ts',
        'export function checkGate',
        'MCP tools/call denied through the gate, end to end'
      )
    ]
  },
  {
    id: 'ASI03',
    title: 'Identity and Privilege Abuse',
    coverage: 'PARTIAL',
    description: 'Agents acting with borrowed or escalated identity and privileges.',
    notes:
      'Admin writes pass the four-step write gate (flag, principal, role, authorizer) and are audited; the authorization policy type checks roles in request metadata. Roles in metadata are only as trustworthy as the caller that sets them; there is no per-agent identity or credential scoping.',
    evidence: [
      ev(
        'runtime/auth/write-gate.ts',
        'test/governance/routes.test.ts',
        'class WriteGate',
        'write gate on governance reload and kill switch'
      ),
      ev(
        'runtime/governance/types/subject-checks.ts',
        'test/governance/builtin-types.test.ts',
        'class AuthorizationPolicy',
        'required-roles policy type'
      )
    ]
  },
  {
    id: 'ASI04',
    title: 'Agentic Supply Chain Vulnerabilities',
    coverage: 'DESIGN',
    description: 'Compromised plugins, tools, MCP servers or models pulled into the agent.',
    notes:
      'Plugins run in a sandbox tier the operator grants (isolate by default, capabilities only by grant). There is no signature verification, pinning or SBOM of plugins.',
    evidence: [
      ev(
        'runtime/plugins/contract.ts',
        null,
        'EffectiveGrant',
        'what the operator grants a plugin is exactly what it runs with'
      )
    ]
  },
  {
    id: 'ASI05',
    title: 'Unexpected Code Execution',
    coverage: 'PARTIAL',
    description: 'Agent-generated or plugin code running with more power than intended.',
    notes:
      'Third-party plugin code runs in an isolated-vm isolate with a heap limit and a per-call time limit, with no Node APIs beyond granted capabilities; the platform never evaluates model output as code. Code-execution tools a plugin offers are screened only by the policy chain (tool-call gate).',
    evidence: [
      ev(
        'runtime/plugins/isolate/isolate-core.ts',
        'test/plugins/isolate.test.ts',
        'new ivm.Isolate({ memoryLimit',
        'isolate with memory limit; time limit and recreation tested'
      ),
      ev('runtime/plugins/contract.ts', null, "SandboxKind = 'isolate' | 'worker' | 'inline'", 'sandbox tiers')
    ]
  },
  {
    id: 'ASI06',
    title: 'Memory and Context Poisoning',
    coverage: 'NOT_ADDRESSED',
    description: 'Poisoned memory, RAG content or context steering later turns.',
    notes:
      'Agent memory and retrieved content are not screened. Only the governance lessons the learning-signal loop re-injects are provenance-tagged, with a TTL and a confidence floor.',
    evidence: []
  },
  {
    id: 'ASI07',
    title: 'Insecure Inter-Agent Communication',
    coverage: 'NOT_ADDRESSED',
    description: 'Spoofed or tampered messages between agents.',
    notes: 'No fleet interceptor or signed agent-to-agent messages yet.',
    evidence: []
  },
  {
    id: 'ASI08',
    title: 'Cascading Failures',
    coverage: 'COVERED',
    description: 'Runaway loops and resource exhaustion spreading across agents.',
    notes:
      'rate-limit (sliding window per subject), concurrency-limit (in-flight slots released on post-response or when a later policy denies), cost-ceiling per tenant, message-length, and the kill switch that denies every admission while armed.',
    evidence: [
      ev(
        'runtime/governance/types/limits.ts',
        'test/governance/builtin-types.test.ts',
        'class RateLimitPolicy',
        'rate and concurrency limits'
      ),
      ev(
        'runtime/governance/types/guardrails.ts',
        'test/governance/builtin-types.test.ts',
        'class CostCeilingPolicy',
        'cost ceiling'
      ),
      ev(
        'runtime/governance/types/kill-switch.ts',
        'test/governance/routes.test.ts',
        'class KillSwitchPolicy',
        'kill switch'
      )
    ]
  },
  {
    id: 'ASI09',
    title: 'Human-Agent Trust Exploitation',
    coverage: 'NOT_ADDRESSED',
    description: 'Agents manipulating the humans who oversee or rely on them.',
    notes:
      'No UI-level safeguards or disclosure checks; decisions are auditable but nothing detects manipulative output.',
    evidence: []
  },
  {
    id: 'ASI10',
    title: 'Rogue Agents',
    coverage: 'PARTIAL',
    description: 'Agents drifting from intended behaviour or acting autonomously against policy.',
    notes:
      'Operators can stop every agent at once with the kill switch; output-length-zscore flags drifting responses; every evaluation lands in the decision log. There is no behavioural baseline per agent or quarantine of one agent.',
    evidence: [
      ev(
        'runtime/governance/types/kill-switch.ts',
        'test/governance/routes.test.ts',
        'arm(reason: string, operator: string, principal',
        'arm and disarm'
      ),
      ev(
        'runtime/governance/types/guardrails.ts',
        'test/governance/builtin-types.test.ts',
        'class OutputLengthZScorePolicy',
        'drift detector'
      ),
      ev(
        'runtime/governance/decision-log.ts',
        'test/governance/gate.test.ts',
        'class GovernanceDecisionLog',
        'decision log'
      )
    ]
  }
]

export function coverageCounts(rows: readonly { coverage: Coverage }[]): Record<Coverage, number> {
  const c: Record<Coverage, number> = { COVERED: 0, PARTIAL: 0, DESIGN: 0, NOT_ADDRESSED: 0 }
  for (const r of rows) c[r.coverage]++
  return c
}

/** A row with its keys in this order: id, title, description, coverage, notes, evidence. */
export const renderRow = (r: MatrixRow): MatrixRow => ({
  id: r.id,
  title: r.title,
  description: r.description,
  coverage: r.coverage,
  notes: r.notes,
  evidence: r.evidence
})

export function owaspMatrix(): Record<string, unknown> {
  return {
    framework: OWASP_FRAMEWORK,
    rows: OWASP_ROWS.map(renderRow),
    coverage_counts: coverageCounts(OWASP_ROWS),
    total_rows: OWASP_ROWS.length
  }
}
