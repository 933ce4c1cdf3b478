import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createHash } from 'node:crypto'
import { loadConfig } from '../../runtime/areas.js'
import { startInteractions } from '../interactions/helpers.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PLATFORM_')))

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--no-node-snapshot', join(root, 'bin', 'platform.js'), ...args], { env })
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => (stdout += d))
    p.stderr.on('data', (d) => (stderr += d))
    p.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex')

t.test(
  'token create --config: the file keeps only the hash, its comments stay, and the token authenticates',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'platform-token-'))
    const file = join(dir, 'platform.yaml')
    writeFileSync(
      file,
      '# my settings\nplatform.server.port: 9090 # a port\nplatform.interactions.http-write-enabled: true\n',
      {
        mode: 0o640
      }
    )
    const r = await cli([
      'token',
      'create',
      '--principal',
      'alice',
      '--role',
      'admin',
      '--role',
      'ops',
      '--config',
      file
    ])
    t.equal(r.code, 0, r.stderr)
    const token = r.stdout.trim()
    t.match(token, /^plt_[A-Za-z0-9_-]{43}$/, 'stdout is the token alone, shown once')
    const text = readFileSync(file, 'utf8')
    t.notOk(text.includes(token), 'the token itself is not written')
    t.ok(text.includes(sha(token)), 'its SHA-256 is')
    t.match(text, /# my settings[\s\S]*# a port/, 'comments are kept')
    t.equal(statSync(file).mode & 0o777, 0o640, 'the file mode is kept')
    const second = await cli(['token', 'create', '--principal', 'bob', '--config', file])
    t.equal(second.code, 0, second.stderr)

    const config = loadConfig({ file })
    t.equal(config.get('platform.server.port'), 9090, 'the other keys are untouched')
    const tokens = config.get('platform.auth.tokens')
    t.same(
      tokens.map((e) => [e.principal, e.roles]),
      [
        ['alice', ['admin', 'ops']],
        ['bob', undefined]
      ],
      'both entries load'
    )
    const tp = await startInteractions({ 'platform.auth.tokens': tokens })
    t.teardown(tp.close)
    const made = await tp.api.create({ message: 'hello' }, token)
    t.equal(made.status, 200, 'the printed token authenticates')
    t.equal((await tp.api.create({ message: 'hello' }, 'plt_' + 'x'.repeat(43))).status, 401, 'another does not')
  }
)

t.test('token create without --config prints the entry to paste; bad input changes nothing', async (t) => {
  const r = await cli(['token', 'create', '--principal', 'carol'])
  t.equal(r.code, 0, r.stderr)
  const token = r.stdout.trim()
  t.match(r.stderr, new RegExp(`- \\{ sha256: ${sha(token)}, principal: "carol", roles: \\[\\] \\}`))
  t.notOk(r.stderr.includes(token), 'the token is on stdout only')

  const dir = mkdtempSync(join(tmpdir(), 'platform-token-'))
  const file = join(dir, 'platform.yaml')
  writeFileSync(file, 'platform: [1, 2\n')
  const broken = await cli(['token', 'create', '--principal', 'dave', '--config', file])
  t.equal(broken.code, 1)
  t.match(broken.stderr, /not valid YAML.*nothing was written/)
  t.equal(broken.stdout, '', 'no token is printed when none was stored')
  t.equal(readFileSync(file, 'utf8'), 'platform: [1, 2\n')
  const noPrincipal = await cli(['token', 'create'])
  t.equal(noPrincipal.code, 2)
  t.match(noPrincipal.stderr, /needs --principal/)
  const badRole = await cli(['token', 'create', '--principal', 'x', '--role', 'a b'])
  t.equal(badRole.code, 2)
  t.match(badRole.stderr, /--role 'a b' is not a role name/)
  const sub = await cli(['token', 'delete'])
  t.equal(sub.code, 2)
  t.match(sub.stderr, /unknown token subcommand 'delete'/)
})
