// The CLI runs from dist/: `npm test` (or `npx tsc -p tsconfig.json`) builds it first.
import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tempRoot, writePlugin, toolPlugin } from './helpers.js'
import { startWithPlugins, statusOf } from './helpers.js'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const bin = join(repo, 'bin/platform.js')

interface Run {
  code: number | null
  stdout: string
  stderr: string
}
function run(args: string[], cwd: string, cmd = process.execPath, pre = ['--no-node-snapshot', bin]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith('PLATFORM_') && !k.startsWith('NODE_') && !k.startsWith('TAP') && v !== undefined) env[k] = v
    const child = spawn(cmd, [...pre, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => {
      stdout += d
    })
    child.stderr.on('data', (d) => {
      stderr += d
    })
    child.on('error', reject)
    child.on('close', (code) => {
      resolve({ code, stdout, stderr })
    })
  })
}

const root = tempRoot('cli-')
t.teardown(() => rmSync(root, { recursive: true, force: true }))
const dir = join(root, 'plugins')
writePlugin(dir, 'good', { index: toolPlugin('hello', 1) })
writePlugin(dir, 'broken', {
  manifest: { name: 'broken', version: '1.0.0', limits: { memoryMb: 4 } },
  index: toolPlugin('x', 1)
})

t.test('plugins list --json: name, version, sandbox, state with the error, contributions', async (t) => {
  const r = await run(
    ['plugins', 'list', '--json', '--plugins', dir, '--set', 'platform.plugins.good={"sandbox":"inline"}'],
    root
  )
  t.equal(r.code, 0, r.stderr)
  const list = JSON.parse(r.stdout) as {
    name: string
    version?: string
    sandbox?: string
    state: string
    error?: string
    contributes: { tools: string[] }
  }[]
  t.same(
    list.map((p) => p.name),
    ['broken', 'good']
  )
  const good = list.find((p) => p.name === 'good')!
  t.match(good, { version: '1.0.0', sandbox: 'inline', state: 'live', contributes: { tools: ['hello'] } })
  t.match(
    list.find((p) => p.name === 'broken'),
    { state: 'failed', error: "plugin.json: 'limits.memoryMb' must be >= 8" }
  )
})

t.test('plugins list: a table, and the grants of platform.yaml apply', async (t) => {
  const { writeFileSync } = await import('node:fs')
  writeFileSync(
    join(root, 'platform.yaml'),
    `platform:\n  plugins:\n    dirs: [${JSON.stringify(dir)}]\n    good:\n      enabled: false\n`
  )
  t.teardown(() => rmSync(join(root, 'platform.yaml')))
  const r = await run(['plugins', 'list'], root)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^NAME\s+VERSION\s+SANDBOX\s+STATE\s+CONTRIBUTES \/ ERROR$/m)
  t.match(r.stdout, /^broken\s+-\s+-\s+failed\s+plugin\.json: 'limits\.memoryMb' must be >= 8$/m)
  t.match(r.stdout, /^good\s+1\.0\.0\s+isolate\s+disabled\s+disabled by the operator/m)
  t.match(
    r.stdout,
    /^static check: each plugin of .* loaded here with the grants of .*platform\.yaml \(not a running server's state\)$/m
  )
})

t.test('plugins list says worker and inline are full trust and warns about a grant naming no plugin', async (t) => {
  const r = await run(
    [
      'plugins',
      'list',
      '--plugins',
      dir,
      '--set',
      'platform.plugins.good={"sandbox":"worker"}',
      '--set',
      'platform.plugins.godo={"sandbox":"inline"}'
    ],
    root
  )
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^good\s+1\.0\.0\s+worker \(full trust\)\s+live/m)
  t.match(
    r.stdout,
    /^note: worker and inline plugins run with full trust \(Node APIs, network, files, environment\): their net and env grants bind only ctx\.fetch and ctx\.env/m
  )
  t.match(
    r.stdout,
    /^warning: platform\.plugins\.godo grants plugin 'godo', which is in no plugin directory \(.*\) \(did you mean 'good'\?\)$/m
  )
  const json = await run(
    ['plugins', 'list', '--json', '--plugins', dir, '--set', 'platform.plugins.good={"sandbox":"worker"}'],
    root
  )
  t.match(
    (JSON.parse(json.stdout) as { name: string; fullTrust: boolean }[]).find((p) => p.name === 'good'),
    { fullTrust: true }
  )
  t.match(json.stderr, /^static check: /)
  const iso = await run(['plugins', 'list', '--plugins', dir], root)
  t.notMatch(iso.stdout, /full trust/, 'no note when every plugin is isolated')
})

t.test('plugins list of the bundled plugins', async (t) => {
  const r = await run(['plugins', 'list', '--json', '--plugins', join(repo, 'plugins')], root)
  t.equal(r.code, 0, r.stderr)
  t.same(
    (JSON.parse(r.stdout) as { name: string }[]).map((p) => p.name),
    ['demo-agent', 'demo-fleet', 'examples', 'policy-word-limit', 'scope-keywords']
  )
})

t.test('plugins validate: exits 1 naming every problem, 0 for a good plugin', async (t) => {
  const bad = await run(['plugins', 'validate', join(dir, 'broken')], root)
  t.equal(bad.code, 1)
  t.match(bad.stderr, /invalid\n\s+plugin\.json: 'limits\.memoryMb' must be >= 8/)
  const ok = await run(['plugins', 'validate', join(dir, 'good')], root)
  t.equal(ok.code, 0, ok.stderr)
  t.match(ok.stdout, /: ok\n\s+good 1\.0\.0, sandbox isolate/, ok.stdout)
  t.match(ok.stdout, /needs no operator grant/, `stdout: ${ok.stdout}\nstderr: ${ok.stderr}`)
  writePlugin(dir, 'needy', {
    manifest: { name: 'needy', version: '1.0.0', sandbox: 'inline', permissions: { kv: true } },
    index: 'export default definePlugin({ ('
  })
  const syntax = await run(['plugins', 'validate', join(dir, 'needy')], root)
  t.equal(syntax.code, 1)
  t.match(syntax.stderr, /index\.js: SyntaxError/)
  const missing = await run(['plugins', 'validate', join(root, 'nowhere')], root)
  t.equal(missing.code, 1)
  t.match(missing.stderr, /plugin\.json is missing/)
  const usage = await run(['plugins', 'validate'], root)
  t.equal(usage.code, 2)
  const unknown = await run(['plugins', 'frobnicate'], root)
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, /unknown plugins subcommand 'frobnicate'/)
})

t.test('plugins new scaffolds a plugin whose own test passes and which the host loads', async (t) => {
  const r = await run(['plugins', 'new', 'hello-world', '--dir', dir], root)
  t.equal(r.code, 0, r.stderr)
  const pdir = join(dir, 'hello-world')
  for (const f of ['plugin.json', 'index.mjs', 'index.test.mjs', 'README.md']) t.ok(existsSync(join(pdir, f)), f)
  t.notOk(
    existsSync(join(pdir, 'package.json')),
    'no package.json of its own: uws-agent-platform resolves from the project'
  )
  t.equal(JSON.parse(readFileSync(join(pdir, 'plugin.json'), 'utf8')).name, 'hello-world')
  const again = await run(['plugins', 'new', 'hello-world', '--dir', dir], root)
  t.equal(again.code, 1, 'an existing folder is not overwritten')
  const badName = await run(['plugins', 'new', 'Bad Name', '--dir', dir], root)
  t.equal(badName.code, 2)

  // a project that has uws-agent-platform installed (here: linked to this checkout)
  mkdirSync(join(root, 'node_modules'), { recursive: true })
  symlinkSync(repo, join(root, 'node_modules', 'uws-agent-platform'), 'dir')
  const test = await run(['--test'], pdir, process.execPath, [])
  t.equal(test.code, 0, `${test.stdout}\n${test.stderr}`)
  t.match(test.stdout, /# pass 3/)

  const v = await run(['plugins', 'validate', pdir], root)
  t.equal(v.code, 0, v.stderr)

  // 'good' serves a tool named hello too: off, or the scaffold's hello would be refused as a clash
  const tp = await startWithPlugins(tempRoot(), {
    'platform.plugins.dirs': [dir],
    'platform.plugins.hello-world': { sandbox: 'inline' },
    'platform.plugins.good': { enabled: false }
  })
  t.teardown(tp.close)
  t.equal(statusOf(tp, 'hello-world')?.state, 'live')
  t.same(await tp.platform.plugins.invoke('hello-world', 'tool', 'hello', { name: 'Ada' }), { greeting: 'Hello, Ada!' })
})

t.test('plugins new in the platform checkout: the commands it prints work exactly as printed', async (t) => {
  const parent = mkdtempSync(join(repo, '.scaffold-test-'))
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  const r = await run(['plugins', 'new', 'scaffolded', '--dir', parent], repo)
  t.equal(r.code, 0, r.stderr)
  t.notMatch(r.stdout, /note: node --test needs/, 'uws-agent-platform resolves here')
  const testCmd = /test it: +(.+)$/m.exec(r.stdout)![1]!
  const checkCmd = /check it: +(.+)$/m.exec(r.stdout)![1]!
  t.match(checkCmd, /^node bin\/platform\.js plugins validate /, 'the bin by path: npx would build the checkout first')
  // as a user would paste them, from the directory the scaffold ran in (npm offline: no download)
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TAP') && !k.startsWith('NODE_'))),
    npm_config_offline: 'true'
  }
  const test = await run(['-c', testCmd], repo, '/bin/sh', [])
  t.equal(test.code, 0, `${test.stdout}\n${test.stderr}`)
  t.match(test.stdout, /# pass 3/)
  const check = await new Promise<Run>((resolve) => {
    const child = spawn('/bin/sh', ['-c', checkCmd], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => {
      stdout += d
    })
    child.stderr.on('data', (d) => {
      stderr += d
    })
    child.on('close', (code) => {
      resolve({ code, stdout, stderr })
    })
  })
  t.equal(check.code, 0, check.stderr)
  t.match(
    check.stdout,
    /: ok\n\s+scaffolded 0\.1\.0, sandbox isolate\n\s+contributes: tools: hello; prompts: introduce/
  )
})

t.test('plugins new outside any project says what node --test needs', async (t) => {
  const parent = tempRoot('scaffold-outside-')
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  const r = await run(['plugins', 'new', 'lonely', '--dir', parent], parent)
  t.equal(r.code, 0, r.stderr)
  t.match(
    r.stdout,
    /note: node --test needs uws-agent-platform resolvable from .*lonely: create the plugin inside a project that has it \(npm install uws-agent-platform\)/
  )
})

t.test('plugins validate prints the grant a plugin needs as one line to paste into platform.yaml', async (t) => {
  const parent = tempRoot('validate-grant-')
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  const pdir = writePlugin(parent, 'asks', {
    manifest: { name: 'asks', version: '1.0.0', permissions: { kv: true, env: ['API_KEY'] } },
    index: toolPlugin('asks_tool', 1)
  })
  const r = await run(['plugins', 'validate', pdir], root)
  t.equal(r.code, 0, r.stderr)
  t.match(
    r.stdout,
    /the operator must grant in platform\.yaml: platform\.plugins\.asks: \{permissions: \{kv: true, env: \["API_KEY"\]\}\}$/m
  )
})
