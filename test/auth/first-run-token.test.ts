// The first-run admin token: when it is made, what is kept (the hash alone, mode 0600), when a
// restart reads it, and the binds and settings where it is never made.
import t from 'tap'
import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../runtime/areas.js'
import { FIRST_RUN_TOKEN_FILE, firstRunToken, isLoopbackHost } from '../../runtime/auth/first-run-token.js'
import { sha256Hex } from '../../runtime/auth/token-secret.js'
import { TokenResolver } from '../../runtime/auth/principal.js'

const dataDir = () => mkdtempSync(join(tmpdir(), 'first-run-'))
const config = (data: string, over: Record<string, unknown> = {}) =>
  loadConfig({ overrides: { 'platform.data-dir': data, ...over } })

t.test('a first loopback start makes an admin token and keeps only its SHA-256, mode 0600', async (t) => {
  const data = dataDir()
  const first = firstRunToken(config(data))!
  t.ok(first.token?.startsWith('plt_'), 'the token, to print once')
  t.equal(first.file, join(data, FIRST_RUN_TOKEN_FILE))
  t.equal(statSync(first.file).mode & 0o777, 0o600)
  const kept = readFileSync(first.file, 'utf8')
  t.notMatch(kept, first.token!, 'the token itself is not on disk')
  t.equal(JSON.parse(kept).sha256, sha256Hex(first.token!))
  const resolver = new TokenResolver([first.entry])
  t.match(resolver.resolve({ authorization: `Bearer ${first.token}` }), { name: 'first-run-admin', roles: ['admin'] })

  const again = firstRunToken(config(data))!
  t.equal(again.token, undefined, 'a restart prints no new token')
  t.same(again.entry, first.entry, 'and accepts the first one')
})

t.test(
  'never on a bind other machines reach, with tokens configured, switched off or without the dashboard',
  async (t) => {
    for (const over of [
      { 'platform.server.host': '0.0.0.0' },
      { 'platform.server.host': '::' },
      { 'platform.server.host': '192.168.1.20' },
      { 'platform.auth.tokens': [{ token: 'configured-token-0123456789', principal: 'ops' }] },
      { 'platform.auth.first-run-token': false },
      { 'platform.admin.enabled': false }
    ]) {
      const data = dataDir()
      t.equal(firstRunToken(config(data, over)), undefined, JSON.stringify(over))
      t.notOk(existsSync(join(data, FIRST_RUN_TOKEN_FILE)), 'nothing written')
    }
    t.ok(isLoopbackHost('localhost') && isLoopbackHost('127.0.0.2') && isLoopbackHost('[::1]'))
    t.notOk(isLoopbackHost('127.example.com') || isLoopbackHost('0.0.0.0') || isLoopbackHost('::'))
  }
)

t.test('a kept file others could change, a symlink or a foreign file stops start-up naming it', async (t) => {
  const loose = dataDir()
  const made = firstRunToken(config(loose))!
  chmodSync(made.file, 0o644)
  t.throws(() => firstRunToken(config(loose)), {
    code: 'PLT_ERR_OPERATOR_MISTAKE',
    message: /mode 0600.*chmod 600 it or delete it/
  })

  const linked = dataDir()
  const target = join(dataDir(), 'planted.json')
  writeFileSync(target, JSON.stringify({ sha256: sha256Hex('attacker'), principal: 'x', roles: ['admin'] }), {
    mode: 0o600
  })
  symlinkSync(target, join(linked, FIRST_RUN_TOKEN_FILE))
  t.throws(() => firstRunToken(config(linked)), {
    code: 'PLT_ERR_OPERATOR_MISTAKE',
    message: /cannot read .*delete it/
  })

  const garbage = dataDir()
  writeFileSync(join(garbage, FIRST_RUN_TOKEN_FILE), '{"sha256":"nope"}', { mode: 0o600 })
  t.throws(() => firstRunToken(config(garbage)), { message: /is not a first-run token file; delete it/ })
})
