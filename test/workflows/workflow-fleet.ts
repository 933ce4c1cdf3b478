// A coordinator plugin for the workflow tests: `ops` over agents that answer from their own run()
// (classify says urgent or routine, research and draft say what they did, broken always throws),
// and the incident workflow that exercises every node type on it.
import { definePlugin, agent } from 'uws-agent-platform/sdk'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import { type Manifest } from '../../runtime/plugins/index.js'
import type { TestPlatform } from '../helpers/platform.js'
import { adminPlatform, call } from '../admin/helpers.js'

export const EDITOR = 'editor-token-0123456789abcdef'
export const APPROVER = 'approver-token-0123456789abcdef'

const MANIFEST: Manifest = {
  name: 'workflow-fleet',
  version: '1.0.0',
  entry: 'index.js',
  sandbox: 'inline',
  permissions: { net: [], kv: false, env: [] },
  limits: { memoryMb: 64, timeoutMs: 5000, concurrency: 8 }
}

const plugin = definePlugin({
  agents: [
    agent({
      name: 'classify',
      description: 'urgent or routine',
      run: (turn) => (/fire|flood/.test(turn.message) ? 'urgent incident' : 'routine request')
    }),
    agent({ name: 'research', description: 'finds facts', run: () => 'research: three facts' }),
    agent({ name: 'draft', description: 'writes', run: (turn) => `draft of ${turn.message.length} chars` }),
    agent({
      name: 'broken',
      description: 'fails',
      run: () => {
        throw new Error('out of paper')
      }
    }),
    agent({
      name: 'ops',
      description: 'the coordinator workflows run on',
      fleet: ['classify', 'research', 'draft', 'broken'],
      run: () => 'ops has nothing to say by itself'
    })
  ]
})

/** The write gate open to EDITOR (save, run) and APPROVER (approve). */
export const WORKFLOW_WRITERS = {
  'platform.admin.http-write-enabled': true,
  'platform.admin.authorizer': 'roles',
  'platform.admin.authorizer-roles': {
    'workflow.write': ['editor'],
    'workflow.run': ['editor'],
    'workflow.approve': ['approver']
  },
  'platform.auth.tokens': [
    { token: EDITOR, principal: 'eve', roles: ['admin', 'editor'] },
    { token: APPROVER, principal: 'ann', roles: ['admin', 'approver'] }
  ]
}

/** Loads the ops fleet into a started platform. */
export function addOpsFleet(tp: TestPlatform): void {
  tp.platform.plugins.set('/plugins/workflow-fleet', MANIFEST, inlineInstance(plugin, { log: tp.platform.logger }))
}

/** A platform with the write gate open to EDITOR (save, run) and APPROVER (approve), and the ops fleet. */
export async function workflowPlatform(extra: Record<string, unknown> = {}): Promise<TestPlatform> {
  const tp = await adminPlatform({ ...WORKFLOW_WRITERS, ...extra })
  addOpsFleet(tp)
  return tp
}

/**
 * classify → route; route → fan (contains:urgent) or → routine (default); fan → research and
 * draft at once → merge (join ' | ') → signoff (approval) → out; routine → out.
 */
export function incident(approval: Record<string, unknown> = {}) {
  return {
    id: 'incident',
    name: 'Incident',
    version: 1,
    nodes: [
      { id: 'classify', type: 'agent' },
      { id: 'route', type: 'condition' },
      { id: 'fan', type: 'fan-out' },
      { id: 'research', type: 'agent' },
      { id: 'draft', type: 'agent', config: { args: { tone: 'calm' } } },
      { id: 'merge', type: 'join', config: { separator: ' | ' } },
      { id: 'signoff', type: 'approval', config: { message: 'Page the on-call?', ...approval } },
      { id: 'routine', type: 'agent', config: { agent: 'draft' } },
      { id: 'out', type: 'output' }
    ],
    edges: [
      { from: 'classify', to: 'route', condition: 'success' },
      { from: 'route', to: 'fan', condition: 'contains:urgent' },
      { from: 'route', to: 'routine', condition: 'default' },
      { from: 'fan', to: 'research' },
      { from: 'fan', to: 'draft' },
      { from: 'research', to: 'merge' },
      { from: 'draft', to: 'merge' },
      { from: 'merge', to: 'signoff' },
      { from: 'signoff', to: 'out' },
      { from: 'routine', to: 'out' }
    ]
  }
}

export async function save(tp: TestPlatform, manifest: unknown): Promise<void> {
  const r = await call(tp, 'POST', '/workflow', { token: EDITOR, body: manifest })
  if (r.status !== 200) throw new Error(`save failed: ${r.text}`)
}

/** Reads the run until `done(run)` holds (at most ~5 s). */
export async function until(tp: TestPlatform, runId: string, done: (run: any) => boolean): Promise<any> {
  for (let i = 0; i < 250; i++) {
    const run = (await call(tp, 'GET', `/workflow/runs/${runId}`, { token: EDITOR })).body
    if (done(run)) return run
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`run ${runId} did not get there`)
}

/** `{nodeId: status}` of a run. */
export function statuses(run: any): Record<string, string> {
  return Object.fromEntries(run.nodeResults.map((r: any) => [r.nodeId, r.status]))
}
