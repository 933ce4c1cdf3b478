import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { definePlugin, agent, tool } from 'uws-agent-platform/sdk'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { installAreas } from '../../runtime/areas.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'
import { type Manifest } from '../../runtime/plugins/index.js'
import { ADMIN_FLEET_VIEW } from '../../runtime/admin/index.js'
import { EMPTY_FLEET, type FleetView } from '../../runtime/admin/fleet-view.js'

export const ALICE = 'alice-admin-token-0123456789'
export const BOB = 'bob-viewer-token-0123456789'
export const CAROL = 'carol-admin-token-0123456789'

/** alice may write; bob lacks the required role; carol has it but the authorizer refuses her. */
export const TOKENS = [
  { token: ALICE, principal: 'alice', roles: ['admin', 'operator'] },
  { token: BOB, principal: 'bob', roles: ['viewer'] },
  { token: CAROL, principal: 'carol', roles: ['admin'] }
]

export const WRITER = {
  'platform.admin.http-write-enabled': true,
  'platform.admin.required-role': 'admin',
  'platform.admin.authorizer': 'roles',
  'platform.admin.authorizer-roles': { '*': ['operator'] },
  'platform.auth.tokens': TOKENS
}

/** A platform with every area, as `platform serve` runs it. */
export function adminPlatform(overrides: Record<string, unknown> = {}): Promise<TestPlatform> {
  return startTestPlatform(overrides, { install: installAreas })
}

/**
 * Like adminPlatform, with a fleet view the test may swap in: `fleet(view)` until `fleet(undefined)`
 * gives the fleet area's own view back. It is added at ADMIN_FLEET_VIEW after the fleet area's, so
 * it is the one the admin reads (the last added wins).
 */
export async function adminPlatformSwappingFleet(
  overrides: Record<string, unknown> = {}
): Promise<TestPlatform & { fleet: (view: FleetView | undefined) => void }> {
  let swapped: FleetView | undefined
  const tp = await startTestPlatform(overrides, {
    install: async (p) => {
      await installAreas(p)
      const own = p.extensions(ADMIN_FLEET_VIEW).at(-1) ?? EMPTY_FLEET
      p.extend(ADMIN_FLEET_VIEW, new Proxy(own, { get: (_, key) => Reflect.get(swapped ?? own, key) }))
    }
  })
  return Object.assign(tp, {
    fleet: (view: FleetView | undefined) => {
      swapped = view
    }
  })
}

/**
 * A writable admin platform serving the bundled plugins (the demo agent at /platform/agent/demo)
 * under a deny-list policy `no-launch-codes` that denies "launch codes".
 */
export function governedAdminPlatform(overrides: Record<string, unknown> = {}): Promise<TestPlatform> {
  const file = join(mkdtempSync(join(tmpdir(), 'governed-admin-')), 'policies.yaml')
  writeFileSync(
    file,
    'version: "3"\npolicies:\n  - name: no-launch-codes\n    type: deny-list\n    config: {phrases: [launch codes]}\n'
  )
  return adminPlatform({
    ...WRITER,
    'platform.plugins.dirs': [fileURLToPath(new URL('../../plugins', import.meta.url))],
    'platform.ai.governance.policy-files': [file],
    // the tests count anonymous denials one by one: none may be sampled away
    'platform.ai.governance.decision-log.anonymous-denied-per-second': 10_000,
    ...overrides
  })
}

export interface Answer {
  status: number
  body: any
  text: string
  type: string
}

export async function call(
  tp: TestPlatform,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown } = {}
): Promise<Answer> {
  const headers: Record<string, string> = {}
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(tp.url + '/api/admin' + path, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {})
  })
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: res.status, body, text, type: res.headers.get('content-type') ?? '' }
}

const MANIFEST: Manifest = {
  name: 'helpers',
  version: '1.2.3',
  entry: 'index.js',
  sandbox: 'inline',
  permissions: { net: [], kv: false, env: [] },
  limits: { memoryMb: 64, timeoutMs: 1000, concurrency: 1 }
}

/** Registers an inline plugin contributing the agent `helper` and the MCP tool `lookup`. */
export function addHelperAgent(tp: TestPlatform): void {
  const plugin = definePlugin({
    tools: [
      tool({
        name: 'lookup',
        description: 'finds things',
        input: {
          type: 'object',
          properties: { q: { type: 'string', description: 'what to find' }, n: { type: 'integer' } },
          required: ['q']
        },
        run: () => 'found'
      })
    ],
    agents: [
      agent({
        name: 'helper',
        description: 'helps',
        version: '2.0.0',
        endpoint: '/helper',
        systemPrompt: 'Be brief.'
      })
    ]
  })
  tp.platform.plugins.set('/plugins/helpers', MANIFEST, inlineInstance(plugin, { log: tp.platform.logger }))
}
