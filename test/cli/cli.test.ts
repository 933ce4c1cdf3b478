import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import WebSocket from 'ws'

// every case spawns the CLI (some twice, some through npm): 99 s of the default 120 in a CI dry run
t.setTimeout(240_000)

const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(root, 'bin', 'platform.js')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
// the child must not inherit PLATFORM_* settings of whoever runs the tests
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PLATFORM_')))

function run(
  args: string[],
  opts: { cwd?: string } = {}
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [bin, ...args], { cwd: opts.cwd ?? root, env })
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => {
      stdout += d
    })
    p.stderr.on('data', (d) => {
      stderr += d
    })
    p.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

/** Starts `serve`, resolves once it printed its URL. */
function serve(
  args: string[],
  cmd: string[] = [process.execPath, bin, 'serve'],
  detached = false
): Promise<{ proc: ChildProcess; url: string; output: () => string; stdout: () => string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd[0]!, [...cmd.slice(1), ...args], { cwd: root, env, detached })
    let out = ''
    let err = ''
    // the plain line is on stderr: stdout carries JSON log records only
    const onData = (d: Buffer) => {
      err += d.toString()
      const m = /^platform listening on (http:\/\/\S+)$/m.exec(err)
      if (m !== null) resolve({ proc, url: m[1]!, output: () => err, stdout: () => out })
    }
    proc.stdout!.on('data', (d) => {
      out += d
    })
    proc.stderr!.on('data', onData)
    proc.on('exit', (code) => reject(new Error(`exited ${code}: ${err}${out}`)))
  })
}

const exitOf = (proc: ChildProcess) =>
  new Promise<{ code: number | null; ms: number }>((resolve) => {
    const t0 = Date.now()
    proc.on('exit', (code) => resolve({ code, ms: Date.now() - t0 }))
  })

const data = () => mkdtempSync(join(tmpdir(), 'platform-cli-'))

t.test('--version and --help', async (t) => {
  const v = await run(['--version'])
  t.equal(v.code, 0)
  t.equal(v.stdout.trim(), pkg.version)
  const h = await run(['--help'])
  t.equal(h.code, 0)
  t.match(h.stdout, /platform serve|serve\s+Serve/)
  t.match(h.stdout, /--plugins DIR/)
  const none = await run([])
  t.equal(none.code, 2)
  t.match(none.stdout, /Usage: platform/)
  const bad = await run(['frobnicate'])
  t.equal(bad.code, 2)
  t.match(bad.stderr, /unknown command 'frobnicate'/)
  const badFlag = await run(['serve', '--nope'])
  t.equal(badFlag.code, 2)
  t.match(badFlag.stderr, /Unknown option '--nope'/)
})

t.test('a configuration error stops start-up naming the key', async (t) => {
  const dir = data()
  writeFileSync(join(dir, 'bad.yaml'), 'platform:\n  server:\n    port: high\n')
  const r = await run(['serve', '--config', join(dir, 'bad.yaml')])
  t.equal(r.code, 78)
  t.match(r.stderr, /configuration error: config key 'platform\.server\.port' must be integer/)
  const p = await run(['serve', '--port', 'abc'])
  t.equal(p.code, 78)
  t.match(p.stderr, /--port expects an integer/)
  // a value the schema admits (a list of strings) that is still no address: refused before anything starts
  const proxies = await run([
    'serve',
    ...['--port', '0', '--data', join(dir, 'data'), '--log-level', 'silent'],
    ...['--set', 'platform.server.trusted-proxies=["127.0.0.1/32","10.0.0.0/33"]']
  ])
  t.equal(proxies.code, 78)
  t.equal(
    proxies.stderr,
    `platform: configuration error: config key 'platform.server.trusted-proxies' holds "10.0.0.0/33", which is neither an IP address nor a CIDR block (IPv4 up to /32, IPv6 up to /128)\n`,
    'one line naming the key and the entry'
  )
})

t.test('serve --port 0 prints its URL, serves, and SIGTERM exits 0 quickly', async (t) => {
  const { proc, url } = await serve(['--port', '0', '--host', '127.0.0.1', '--data', data(), '--log-level', 'warn'])
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
  t.not(url, 'http://127.0.0.1:0')
  t.same(await (await fetch(url + '/healthz')).json(), { status: 'UP' })
  const done = exitOf(proc)
  proc.kill('SIGTERM')
  const { code, ms } = await done
  t.equal(code, 0)
  t.ok(ms < 5000, 'within 5 s')
})

t.test(
  'stdout is JSON log records only: the listening line is a record there and a plain line on stderr',
  async (t) => {
    const dataDir = data()
    const { proc, url, stdout, output } = await serve([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--data',
      dataDir,
      '--log-level',
      'info',
      // without the first-run token (test/admin/first-run-browser.test.ts), the banner says there is no token
      '--set',
      'platform.auth.first-run-token=false'
    ])
    t.equal((await fetch(url + '/healthz')).status, 200)
    // the block after the listening line says what to do next, and its request works as printed
    for (let i = 0; i < 100 && !/interactions writes/.test(output()); i++) await new Promise((r) => setTimeout(r, 50))
    const banner = output()
    t.match(banner, `  dashboard  ${url}/platform/admin/`)
    const node = /node {7}(node-[0-9a-f]{12})\n/.exec(banner)?.[1]
    t.ok(node, 'the node id, generated on the first start')
    t.equal(readFileSync(join(dataDir, 'node-id'), 'utf8').trim(), node, 'and kept in the data directory')
    t.match(banner, /off {8}no API token: node bin\/platform\.js token create --principal you --role admin/)
    t.match(banner, 'admin writes (kill switch, workflows, evals): platform.admin.http-write-enabled: true')
    const tryLine = /try {8}curl -N -X POST (\S+) -d '([^']+)'/.exec(banner)
    t.ok(tryLine, 'a request to try')
    const answer = await fetch(tryLine![1]!, { method: 'POST', body: tryLine![2] })
    t.equal(answer.status, 200, 'the printed request works')
    t.ok((await answer.text()).length > 0)
    const done = exitOf(proc)
    proc.kill('SIGTERM')
    t.equal((await done).code, 0)
    const lines = stdout()
      .split('\n')
      .filter((l) => l.trim() !== '')
    t.ok(lines.length > 0)
    for (const l of lines) t.doesNotThrow(() => JSON.parse(l), `a JSON record: ${l.slice(0, 120)}`)
    const records = lines.map((l) => JSON.parse(l))
    t.match(
      records.find((r) => r.msg === 'platform listening'),
      { level: 30, url }
    )
    t.match(
      records.find((r) => /plugins? live, 0 failed$/.test(r.msg)),
      { level: 30, failed: 0 },
      'one summary line'
    )
    t.notOk(
      records.some((r) => r.msg === 'plugin loaded'),
      'each plugin of the first scan logs at debug'
    )
  }
)

t.test('SIGTERM closes open WebSockets with 1001 before exiting 0', async (t) => {
  const { proc, url } = await serve(['--port', '0', '--host', '127.0.0.1', '--data', data(), '--log-level', 'warn'])
  const ws = new WebSocket(url.replace('http', 'ws') + '/platform/rooms/lobby')
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)))
  const done = exitOf(proc)
  proc.kill('SIGTERM')
  t.equal(await closed, 1001)
  t.equal((await done).code, 0)
})

t.test('SIGINT also shuts down gracefully; flags reach the config', async (t) => {
  const dir = data()
  // --plugins paths must exist (a missing one is a typo: exit 78, see below)
  mkdirSync(join(dir, 'p1'))
  mkdirSync(join(dir, 'p2'))
  const { proc, url } = await serve([
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--data',
    dir,
    '--set',
    'platform.admin.enabled=false',
    '--plugins',
    join(dir, 'p1'),
    '--plugins',
    join(dir, 'p2')
  ])
  t.equal((await fetch(url + '/readyz')).status, 200)
  const done = exitOf(proc)
  proc.kill('SIGINT')
  t.equal((await done).code, 0)
})

t.test('npm start -- <flags> forwards the flags to platform serve; Ctrl-C stops it', async (t) => {
  const { proc, url } = await serve(
    ['--', '--port', '0', '--host', '127.0.0.1', '--data', data()],
    ['npm', 'start', '--silent'],
    true
  )
  t.equal((await fetch(url + '/healthz')).status, 200)
  const done = exitOf(proc)
  // a terminal's Ctrl-C signals the whole foreground process group (npm, sh, node)
  process.kill(-proc.pid!, 'SIGINT')
  await done
  const after = await fetch(url + '/healthz', { headers: { connection: 'close' } }).then(
    () => 'served',
    () => 'stopped'
  )
  t.equal(after, 'stopped')
})

t.test(
  'serve binds 127.0.0.1 by default and prints it; a second serve on that port exits 78 with one line',
  async (t) => {
    const { proc, url } = await serve(['--port', '0', '--data', data(), '--log-level', 'warn'])
    t.teardown(() => {
      proc.kill('SIGTERM')
    })
    t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/, 'the address actually bound')
    const port = new URL(url).port
    // before the fix the second process shared the port through SO_REUSEPORT and kept running
    const second = spawn(process.execPath, [bin, 'serve', '--port', port, '--data', data(), '--log-level', 'warn'], {
      cwd: root,
      env
    })
    let stdout = ''
    let stderr = ''
    second.stdout.on('data', (d) => {
      stdout += d
    })
    second.stderr.on('data', (d) => {
      stderr += d
    })
    const killer = setTimeout(() => {
      second.kill('SIGKILL')
    }, 10_000)
    const { code } = await exitOf(second)
    clearTimeout(killer)
    t.equal(code, 78)
    t.equal(stderr, `platform: port ${port} is in use\n`, 'one clear line, no stack trace')
    t.notMatch(stdout, /listening/)
    t.equal((await fetch(url + '/healthz')).status, 200, 'the first server keeps its port')
  }
)

t.test('operator errors at start-up print one line on stderr and exit 78, never a stack trace', async (t) => {
  const dir = data()
  writeFileSync(join(dir, 'typo.yaml'), 'rules: []\ndefault:\n  action: deny\n')
  writeFileSync(join(dir, 'unknown-type.yaml'), 'policies:\n  - {name: a, type: no-such-type}\n')
  writeFileSync(join(dir, 'a-file'), '')
  const base = ['serve', '--port', '0', '--host', '127.0.0.1', '--data', join(dir, 'data'), '--log-level', 'silent']
  const policy = (f: string) => [
    '--set',
    `platform.ai.governance.policy-files=${JSON.stringify([join(dir, f)])}`,
    '--set',
    'platform.plugins.dirs=[]'
  ]
  const cases: [string[], RegExp][] = [
    [
      policy('typo.yaml'),
      /^platform: unknown key 'default' in the rules document of yaml:.*typo\.yaml line 2 \(did you mean 'defaults'\?\)/
    ],
    [
      policy('unknown-type.yaml'),
      /^platform: failed to build policies\[0\] \('a'\) in yaml:.*unknown-type\.yaml: unknown policy type 'no-such-type'/
    ],
    [policy('missing.yaml'), /^platform: cannot read policy file .*missing\.yaml: ENOENT/],
    [['--plugins', join(dir, 'nowhere')], /^platform: --plugins .*nowhere: no such directory$/],
    [
      ['--plugins', join(dir, 'a-file')],
      /^platform: plugin directory .*a-file cannot be read: it is not a directory \(platform\.plugins\.dirs\)$/
    ],
    [
      ['--set', 'platform.server.prot=1'],
      /^platform: configuration error: unknown config key 'platform\.server\.prot' \(from command line\) \(did you mean 'platform\.server\.port'\?\)$/
    ]
  ]
  for (const [args, re] of cases) {
    const r = await run([...base, ...args])
    t.equal(r.code, 78, args.join(' '))
    t.match(r.stderr.trim(), re, args.join(' '))
    t.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`)
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  }
})

t.test(
  'SIGHUP applies changed plugin grants from platform.yaml without a restart; other keys are named as needing one',
  async (t) => {
    const { writePlugin, toolPlugin } = await import('../plugins/helpers.js')
    const dir = data()
    const plugins = join(dir, 'plugins')
    writePlugin(plugins, 'needy', {
      manifest: { name: 'needy', version: '1.0.0', permissions: { kv: true } },
      index: toolPlugin('needy_tool', 1)
    })
    const yaml = join(dir, 'platform.yaml')
    const base = `platform.plugins.dirs: [${JSON.stringify(plugins)}]\n`
    writeFileSync(yaml, base)
    // log records are on stdout
    const { proc, stdout: output } = await serve([
      '--config',
      yaml,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--data',
      join(dir, 'data'),
      '--log-level',
      'info'
    ])
    t.teardown(() => {
      proc.kill('SIGKILL')
    })
    const until = async (re: RegExp, what: string) => {
      const end = Date.now() + 15_000
      while (!re.test(output())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${output()}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    await until(/"plugin":"needy".*"msg":"plugin failed to load"/, 'the refusal')
    t.match(output(), /grant it in platform\.yaml: platform\.plugins\.needy: \{permissions: \{kv: true\}\}/)
    // plugins load before the server listens; a reload is for a started platform
    await until(/"msg":"platform listening"/, 'the start')

    // the line from the refusal, pasted as is
    writeFileSync(yaml, base + 'platform.plugins.needy: {permissions: {kv: true}}\n')
    proc.kill('SIGHUP')
    await until(/"plugin":"needy"[^\n]*"msg":"plugin reloaded"/, 'needy to load under the new grant')
    t.pass('the plugin goes live on SIGHUP')

    // a broken file on SIGHUP keeps the running configuration
    writeFileSync(yaml, base + 'platform.plugins.needy: {permisions: {kv: true}}\n')
    proc.kill('SIGHUP')
    await until(
      /SIGHUP: configuration not reloaded, the running one stays: config key 'platform\.plugins\.needy' has unknown key 'permisions'/,
      'the refused reload'
    )
    // a key other than grants is named as needing a restart
    writeFileSync(
      yaml,
      base + 'platform.plugins.needy: {permissions: {kv: true}}\nplatform.server.body-limit-bytes: 2048\n'
    )
    proc.kill('SIGHUP')
    await until(/restart to apply platform\.server\.body-limit-bytes/, 'the restart warning')
    const done = exitOf(proc)
    proc.kill('SIGTERM')
    t.equal((await done).code, 0)
  }
)
