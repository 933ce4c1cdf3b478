import t from 'tap'
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join, resolve, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startWithPlugins, tempRoot, writePlugin, toolPlugin, inlineGrants, statusOf, waitFor } from './helpers.js'

const SDK = "import { definePlugin, tool, agent, policyType } from 'uws-agent-platform/sdk'\n"

t.test(
  'a second plugin contributing a name already served is refused naming both; the first keeps serving',
  async (t) => {
    const root = tempRoot()
    writePlugin(root, 'alpha', { index: toolPlugin('hello', 'from alpha') })
    writePlugin(root, 'beta', { index: toolPlugin('hello', 'from beta') })
    writePlugin(root, 'carbon', {
      index:
        SDK +
        "export default definePlugin({ policyTypes: [policyType({ type: 'word-cap', evaluate: () => ({ decision: 'admit' }) })], tools: [tool({ name: 'carbon_only', run: () => 1 })] })"
    })
    writePlugin(root, 'delta', {
      index:
        SDK +
        "export default definePlugin({ policyTypes: [policyType({ type: 'word-cap', evaluate: () => ({ decision: 'deny', reason: 'x' }) })] })"
    })
    const tp = await startWithPlugins(root, inlineGrants('alpha', 'beta', 'carbon', 'delta'))
    t.teardown(tp.close)

    t.equal(statusOf(tp, 'alpha')?.state, 'live')
    t.match(statusOf(tp, 'beta'), {
      state: 'failed',
      error:
        "plugin 'beta' is refused: it contributes tool 'hello' (already served by plugin 'alpha'); rename it in one plugin or disable one (platform.plugins.<name>.enabled: false)"
    })
    t.equal(statusOf(tp, 'carbon')?.state, 'live')
    t.match(
      statusOf(tp, 'delta')?.error,
      /plugin 'delta' is refused: it contributes policy type 'word-cap' \(already served by plugin 'carbon'\)/
    )
    const hello = tp.platform.plugins.tools().filter((x) => x.name === 'hello')
    t.same(
      hello.map((x) => x.plugin),
      ['alpha'],
      'one tool named hello, from the first plugin'
    )
    t.match(await hello[0]!.call({}), { value: 'from alpha' })
    t.same(
      tp.platform.plugins.policyTypes().map((p) => p.plugin),
      ['carbon']
    )

    // when the plugin serving the name goes away, the refused one is loaded again and goes live
    rmSync(join(root, 'alpha'), { recursive: true, force: true })
    await waitFor(() => statusOf(tp, 'beta')?.state === 'live', 'beta to go live once alpha is gone')
    t.match(
      await tp.platform.plugins
        .tools()
        .find((x) => x.name === 'hello')!
        .call({}),
      { value: 'from beta' }
    )
    t.equal(statusOf(tp, 'delta')?.state, 'failed', 'an unrelated refusal stays')
  }
)

t.test('agents clash by name too', async (t) => {
  const root = tempRoot()
  const agentPlugin = (reply: string) =>
    SDK +
    `export default definePlugin({ agents: [agent({ name: 'helper', description: 'd', tools: [tool({ name: 'ping', run: () => ${JSON.stringify(reply)} })] })] })`
  writePlugin(root, 'one', { index: agentPlugin('one') })
  writePlugin(root, 'two', { index: agentPlugin('two') })
  const tp = await startWithPlugins(root, inlineGrants('one', 'two'))
  t.teardown(tp.close)
  t.equal(statusOf(tp, 'one')?.state, 'live')
  t.match(statusOf(tp, 'two')?.error, /it contributes agent 'helper' \(already served by plugin 'one'\)/)
  t.same(
    tp.platform.plugins.agents().map((a) => a.plugin),
    ['one']
  )
})

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
function listJson(args: string[]): Promise<{ name: string; dir: string; state: string; error?: string }[]> {
  return new Promise((resolve, reject) => {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !k.startsWith('PLATFORM_') && !k.startsWith('NODE_') && !k.startsWith('TAP')
      )
    )
    const child = spawn(
      process.execPath,
      ['--no-node-snapshot', join(repo, 'bin/platform.js'), 'plugins', 'list', '--json', ...args],
      { cwd: repo, env }
    )
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.on('error', reject)
    child.on('close', () => {
      resolve(JSON.parse(out))
    })
  })
}

t.test(
  'two folders with one plugin name: the first directory in dirs order wins, then folder path order; server and plugins list agree',
  async (t) => {
    const first = tempRoot()
    const second = tempRoot()
    // the second directory's folder sorts first by path and by folder name: dirs order still decides
    writePlugin(second, 'a-copy', {
      manifest: { name: 'dup', version: '2.0.0' },
      index: toolPlugin('dup_tool', 'second')
    })
    writePlugin(first, 'z-copy', {
      manifest: { name: 'dup', version: '1.0.0' },
      index: toolPlugin('dup_tool', 'first')
    })
    writePlugin(first, 'y-copy', {
      manifest: { name: 'dup', version: '1.5.0' },
      index: toolPlugin('dup_tool', 'first-y')
    })
    const dirs = [first, second]
    const tp = await startWithPlugins(first, { 'platform.plugins.dirs': dirs, ...inlineGrants('dup') })
    t.teardown(async () => {
      await tp.close()
      rmSync(second, { recursive: true, force: true })
    })
    const server = tp.platform.plugins.status().map((s) => [s.name, s.dir, s.state, s.error ?? ''])
    t.same(
      server.find((s) => s[0] === 'dup'),
      ['dup', join(first, 'y-copy'), 'live', ''],
      'first directory, then folder path order'
    )
    t.match(
      server.filter((s) => s[2] === 'failed').map((s) => s[3]),
      [
        /another folder \(.*y-copy\) already provides plugin 'dup'/,
        /another folder \(.*y-copy\) already provides plugin 'dup'/
      ]
    )

    const listed = await listJson([
      '--set',
      `platform.plugins.dirs=${JSON.stringify(dirs)}`,
      '--set',
      'platform.plugins.dup={"sandbox":"inline"}'
    ])
    t.same(
      listed.map((s) => [s.name, s.dir, s.state, s.error ?? '']),
      server,
      'plugins list shows the same winner and refusals'
    )
  }
)
