// The per-agent paths A2A and AG-UI share: a custom path is served as its plugin appears, and where
// it cannot be (not a plain path, or its route already taken) a warning, no route and no endpoint listed.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AI } from '../../runtime/ai/index.js'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'

const PLUGIN = `import { definePlugin, agent } from 'uws-agent-platform/sdk'
export default definePlugin({ agents: [
  agent({ name: 'braced', endpoint: '/odd/{x}', systemPrompt: 'Odd.' }),
  agent({ name: 'squatted', endpoint: '/taken', systemPrompt: 'Late.' }),
  agent({ name: 'roamer', endpoint: '/custom/roamer', systemPrompt: 'Roam.' })
] })
`

t.test('custom agent paths: served when they can be, warned about and not listed when not', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'agent-paths-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const tp = await startTestPlatform({ 'platform.plugins.dirs': [root] }, { install: installAreas })
  t.teardown(tp.close)
  // routes someone else holds before the agent that names them appears
  for (const p of ['/taken/a2a', '/taken/agui'])
    tp.platform.http.post(p, (ctx) => {
      ctx.send(200, 'mine', 'text/plain')
    })
  mkdirSync(join(root, 'paths'))
  writeFileSync(
    join(root, 'paths', 'plugin.json'),
    JSON.stringify({ name: 'paths', version: '1.0.0', entry: 'index.js', sandbox: 'isolate' })
  )
  writeFileSync(join(root, 'paths', 'index.js'), PLUGIN)
  await tp.platform.pluginHost.rescan()

  const endpoints = (name: string): Record<string, string> | undefined =>
    tp.platform
      .area(AI)
      .agents()
      .find((a) => a.name === name)?.endpoints
  const warned = (msg: string): boolean => tp.logs.some((l) => l.msg === msg)
  for (const [label, suffix] of [
    ['A2A', 'a2a'],
    ['AG-UI', 'agui']
  ] as const) {
    t.ok(warned(`agent 'braced': ${label} path /odd/{x}/${suffix} is not a plain path; not served`), label)
    t.equal(endpoints('braced')?.[suffix], undefined, `${label}: a path with a pattern character is not listed`)
    t.ok(warned(`agent 'squatted': ${label} path /taken/${suffix} is taken; not served`), label)
    t.equal(endpoints('squatted')?.[suffix], undefined, `${label}: a taken path is not listed`)
    t.equal(endpoints('roamer')?.[suffix], `/custom/roamer/${suffix}`, `${label}: a free custom path is served`)
    const res = await fetch(`${tp.url}/taken/${suffix}`, { method: 'POST', body: '{}' })
    t.equal(await res.text(), 'mine', `${label}: the route stays its holder's`)
  }
  const card = await fetch(`${tp.url}/custom/roamer/a2a/.well-known/agent-card.json`)
  t.equal((await card.json()).name, 'roamer')
})
