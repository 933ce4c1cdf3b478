import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { postTurn, type Frame } from '../ai/agent-clients.js'

/**
 * Fleet agents whose behaviour the message chooses (`say` echoes, `flaky` fails its first N calls
 * of a message `flaky-N`, `sleepy` sleeps its message in ms, `broken` throws, `switch` fails on
 * `fail`, `count` counts its runs) and coordinators whose run() does what the turn's message says:
 * `{"op": "call" | "parallel" | "pipeline" | "vote" | "route" | "refineUntil", "params": [...]}`,
 * answering the JSON of the result.
 */
export const FLEET_AGENTS = `
const runs = new Map()
const wait = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms)
  signal?.addEventListener('abort', () => { clearTimeout(t); resolve() })
})
const boss = (name, fleet) => agent({
  name,
  fleet,
  async run(turn, ctx) {
    const q = JSON.parse(turn.message)
    // hex params: what the coordinator's own turn admission must not see (a phrase policies refuse)
    if (q.hex !== undefined) q.params = JSON.parse(q.hex.match(/../g).map((h) => String.fromCharCode((h.charCodeAt(0) - 103) * 16 + h.charCodeAt(1) - 103)).join(''))
    if (q.op === 'has') return JSON.stringify(typeof ctx.fleet)
    if (q.op === 'route') return JSON.stringify(await ctx.fleet.route(q.params[0], [
      { when: (r) => r.text.includes('long'), call: { agent: 'count' } },
      { otherwise: (r) => ({ agent: 'say', args: { message: 'short: ' + r.text } }) }
    ]))
    if (q.op === 'refineUntil') return JSON.stringify(await ctx.fleet.refineUntil(q.params[0], [
      { name: 'has-3', evaluate: (r) => ({ score: r.text.endsWith('3') ? 1 : 0.2, passed: r.text.endsWith('3'), reason: 'say 3' }) }
    ], { maxTurns: q.params[1] }))
    // journal ids left out: their digits could read as a phone number to a PII policy
    return JSON.stringify(await ctx.fleet[q.op](...q.params), (k, v) => (k === 'eventId' ? undefined : v))
  }
})
export default definePlugin({
  agents: [
    agent({ name: 'say', run: (turn) => turn.message }),
    agent({ name: 'count', run: () => { runs.set('count', (runs.get('count') ?? 0) + 1); return 'count ' + runs.get('count') } }),
    agent({ name: 'flaky', run: (turn) => {
      const n = (runs.get(turn.message) ?? 0) + 1
      runs.set(turn.message, n)
      if (n <= Number(turn.message.split('-')[1])) throw new Error('flake ' + n)
      return 'ok after ' + n
    } }),
    agent({ name: 'sleepy', async run(turn, ctx) {
      await wait(Number(turn.message), ctx.signal)
      return ctx.signal.aborted ? 'aborted' : 'slept'
    } }),
    agent({ name: 'broken', run: () => { throw new Error('kaput') } }),
    agent({ name: 'switch', run: (turn) => { if (turn.message === 'fail') throw new Error('down'); return 'up' } }),
    agent({ name: 'plain', run: (turn, ctx) => 'fleet: ' + typeof ctx.fleet }),
    boss('boss', [
      'say',
      'count',
      { name: 'flaky', maxRetries: 2 },
      { name: 'sleepy', timeoutMs: 200 },
      'broken',
      { name: 'switch', circuitBreaker: true },
      { name: 'ghost', required: false, weight: 2, version: '2.0.0' }
    ]),
    boss('waiter', ['sleepy', 'say']),
    boss('c1', ['c2', 'say']),
    boss('c2', ['c3']),
    boss('c3', ['c1'])
  ]
})
`

/** Writes a plugin folder `name` with FLEET_AGENTS (or `source`) under a fresh directory. */
export function fleetPluginDir(
  name: string,
  sandbox: string,
  source = FLEET_AGENTS
): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-'))
  mkdirSync(join(dir, name))
  writeFileSync(join(dir, name, 'plugin.json'), JSON.stringify({ name, version: '1.0.0', entry: 'index.js', sandbox }))
  writeFileSync(join(dir, name, 'index.js'), `import { definePlugin, agent } from 'uws-agent-platform/sdk'\n${source}`)
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A platform serving one fleet plugin (inline unless said), admin content reads open. */
export async function fleetPlatform(
  overrides: Record<string, unknown> = {},
  sandbox = 'inline',
  source?: string
): Promise<TestPlatform & { pluginDir: string }> {
  const plugin = fleetPluginDir('fleet-test', sandbox, source)
  const tp = await startTestPlatform(
    {
      'platform.plugins.dirs': [plugin.dir],
      'platform.plugins.fleet-test': { sandbox },
      'platform.admin.content-read-auth-required': false,
      ...overrides
    },
    { install: installAreas }
  )
  return {
    ...tp,
    pluginDir: plugin.dir,
    close: async () => {
      await tp.close()
      plugin.remove()
    }
  }
}

export interface Asked {
  frames: Frame[]
  /** The coordinator's answer parsed (the JSON of the result). */
  result: any
  coordinationId: string | undefined
}

/** One coordinator turn over SSE (a one-shot POST) doing `op(...params)`. */
export function ask(base: string, coordinator: string, op: string, ...params: unknown[]): Promise<Asked> {
  return asking(base, coordinator, { op, params })
}

/**
 * The same with the params hidden from the coordinator turn's own admission (hex), so only the
 * dispatch's governance sees them.
 */
export function askHidden(base: string, coordinator: string, op: string, ...params: unknown[]): Promise<Asked> {
  // hex in the letters g..v: digits could look like a phone or card number to a PII policy
  const hex = Buffer.from(JSON.stringify(params))
    .toString('hex')
    .replace(/./g, (c) => String.fromCharCode(103 + parseInt(c, 16)))
  return asking(base, coordinator, { op, hex })
}

async function asking(base: string, coordinator: string, q: Record<string, unknown>): Promise<Asked> {
  const { status, frames, body } = await postTurn(
    base,
    `/platform/agent/${coordinator}`,
    JSON.stringify({ message: JSON.stringify(q) })
  )
  if (status !== 200) throw new Error(`status ${status}: ${body}`)
  const end = frames.at(-1)
  if (end?.event !== 'complete') throw new Error('the turn failed: ' + JSON.stringify(end))
  const step = frames.find((f) => f.event === 'agent-step' && f.data.data?.coordinationId !== undefined)
  return {
    frames,
    result: JSON.parse(end.data.summary as string),
    coordinationId: step?.data.data.coordinationId as string | undefined
  }
}

/** GET an admin route as JSON. */
export async function admin(base: string, path: string): Promise<any> {
  const res = await fetch(`${base}/api/admin${path}`)
  return { status: res.status, body: await res.json() }
}
