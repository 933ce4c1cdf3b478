// Cycles across plugins that come and go: a coordinator is unavailable while a plugin dropped in
// later closes a cycle through it, logged once, and available again once that plugin is removed.
import t from 'tap'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ask, fleetPlatform } from './helpers.js'
import { eventually } from '../ai/agent-clients.js'

const coordinator = (name: string, fleet: string[]): string => `
export default definePlugin({ agents: [agent({
  name: '${name}',
  fleet: ${JSON.stringify(fleet)},
  async run(turn, ctx) {
    const q = JSON.parse(turn.message)
    return JSON.stringify(await ctx.fleet[q.op](...q.params))
  }
})] })
`
const tp = await fleetPlatform(
  {},
  'inline',
  coordinator('x', ['y', 'say']).replace(
    'agents: [',
    `agents: [
  agent({ name: 'say', run: (turn) => turn.message }),`
  )
)
t.teardown(tp.close)

t.test('a plugin that closes a cycle makes the coordinator unavailable until it goes', async (t) => {
  t.match((await ask(tp.url, 'x', 'call', 'y')).result, { text: "Agent 'y' is not available (not loaded)" })
  t.match((await ask(tp.url, 'x', 'call', 'say', 'run', { message: 'hi' })).result, { text: 'hi', success: true })
  const dir = join(tp.pluginDir, 'loop-y')
  mkdirSync(dir)
  writeFileSync(join(dir, 'plugin.json'), JSON.stringify({ name: 'loop-y', version: '1.0.0', entry: 'index.js' }))
  writeFileSync(
    join(dir, 'index.js'),
    `import { definePlugin, agent } from 'uws-agent-platform/sdk'\n${coordinator('y', ['x'])}`
  )
  await eventually(() => tp.platform.plugins.has('loop-y'), 15_000, 'loop-y loaded')
  await eventually(
    () => tp.logs.some((l) => l.msg === 'Circular fleet dependency: x -> y -> x: the coordinator is unavailable'),
    5000,
    'the cycle logged at load'
  )
  t.match((await ask(tp.url, 'x', 'call', 'say', 'run', { message: 'hi' })).result, {
    success: false,
    text: 'Circular fleet dependency: x -> y -> x'
  })
  await ask(tp.url, 'x', 'call', 'say', 'run', { message: 'again' })
  t.equal(tp.logs.filter((l) => String(l.msg).startsWith('Circular fleet dependency: x -> y -> x')).length, 1)
  rmSync(dir, { recursive: true, force: true })
  await eventually(() => !tp.platform.plugins.has('loop-y'), 15_000, 'loop-y removed')
  t.match((await ask(tp.url, 'x', 'call', 'say', 'run', { message: 'back' })).result, { text: 'back', success: true })
})
