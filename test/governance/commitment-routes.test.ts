// GET /api/admin/governance/commitments and /commitments/keys on a real platform: the flag, the
// content-read gate, limit, the row shape, verdicts a third party can reproduce from the keys
// route, a record altered in the store, a restart, and a signing key that does not load.
import t from 'tap'
import { createPublicKey, verify } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import canonicalize from 'canonicalize'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'
import { installAreas } from '../../runtime/areas.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import { COMMITMENTS } from '../../runtime/governance/index.js'
import { SignedCommitmentLog } from '../../runtime/governance/commitment-log.js'
import { type CommitmentInput, type LoggedCommitment } from '../../runtime/contracts/index.js'
import type { Platform } from '../../runtime/platform.js'

const install = (p: Platform) => installAreas(p, [scopeArea, governanceArea])
const TOKEN = 'alice-token-0123456789'
const auth = { 'platform.auth.tokens': [{ token: TOKEN, principal: 'alice' }] }
const ON = { 'platform.ai.governance.commitment-records.enabled': true, ...auth }

const input: CommitmentInput = {
  coordinationId: 'coord-7',
  issuer: 'coordinator:planner',
  principal: 'alice',
  subject: 'weather-agent',
  scope: 'forecast',
  outcome: 'admit',
  properties: { city: 'Oslo' }
}

async function get(tp: TestPlatform, path: string, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${tp.url}/api/admin/governance${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` }
  })
  return { status: res.status, body: await res.json() }
}

const dir = mkdtempSync(join(tmpdir(), 'commitment-routes-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('flag off (the default): an empty listing, no key, no log', async (t) => {
  const tp = await startTestPlatform(auth, { install })
  t.teardown(tp.close)
  t.same(await get(tp, '/commitments', TOKEN), { status: 200, body: [] })
  t.same(await get(tp, '/commitments/keys'), { status: 200, body: { keys: [] } })
  t.equal(tp.platform.hasArea(COMMITMENTS), false)
})

t.test('the gate, limit, the row shape and a restart', async (t) => {
  const dataDir = join(dir, 'data')
  let tp = await startTestPlatform({ ...ON, 'platform.data-dir': dataDir }, { install })
  const keyFile = join(dataDir, 'commitment-signing-key.pem')
  t.equal(statSync(keyFile).mode & 0o777, 0o600, 'the key was generated 0600 under the data dir')
  t.match(tp.logs, [{ msg: /^generated a commitment signing key/ }])

  const log = tp.platform.area(COMMITMENTS)
  const records = []
  for (const outcome of ['admit', 'started', 'completed'] as const)
    records.push(await log.record({ ...input, outcome }))
  const unsigned = new SignedCommitmentLog().issue({ ...input, outcome: 'failed' })
  await log.append(unsigned)

  const anonymous = await get(tp, '/commitments')
  t.equal(anonymous.status, 401)
  t.equal(anonymous.body.code, 'PLT_ERR_ADMIN_CONTENT_READ_AUTH_REQUIRED')
  t.equal((await get(tp, '/commitments/keys')).status, 200, 'the keys are open')

  const all = await get(tp, '/commitments', TOKEN)
  t.equal(all.status, 200)
  t.same(
    all.body.map((r: any) => r.outcome),
    ['failed', 'completed', 'started', 'admit'],
    'newest first'
  )
  t.same(Object.keys(all.body[1]), [
    'id',
    'coordinationId',
    'eventTimestamp',
    'issuer',
    'principal',
    'subject',
    'scope',
    'delegationChain',
    'issuedAt',
    'expiresAt',
    'outcome',
    'properties',
    'proof',
    'signed',
    'verified'
  ])
  t.same(
    all.body.map((r: any) => [r.signed, r.verified]),
    [
      [false, false],
      [true, true],
      [true, true],
      [true, true]
    ]
  )
  t.same(all.body[3].properties, { city: 'Oslo' })

  // a third party: the keys route and the listing's JSON are enough
  const { keys } = (await get(tp, '/commitments/keys')).body
  t.equal(keys.length, 1)
  t.match(keys[0], { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', kid: records[0]!.proof.keyId })
  const key = createPublicKey({ key: keys[0], format: 'jwk' })
  for (const row of all.body.slice(1)) {
    const { proof, eventTimestamp: _e, signed: _s, verified: _v, ...record } = row
    t.ok(verify(null, Buffer.from(canonicalize(record)!), key, Buffer.from(proof.signature, 'base64url')))
  }

  t.same((await get(tp, '/commitments?limit=2', TOKEN)).body.length, 2)
  t.same((await get(tp, '/commitments?limit=0', TOKEN)).body, [])
  t.same((await get(tp, '/commitments?limit=-3', TOKEN)).body, [])
  for (const bad of ['abc', '1.5', '', '1e3']) {
    const r = await get(tp, `/commitments?limit=${bad}`, TOKEN)
    t.equal(r.status, 400, `limit=${bad}`)
    t.equal(r.body.code, 'PLT_ERR_INVALID_QUERY')
  }

  // alter the started record's subject in LMDB, then restart: it is listed, signed, not verified
  const db = tp.platform.store.db<LoggedCommitment | LoggedCommitment[], [number, number]>('commitments')
  let altered = 0
  for (const { key: k, value } of db.getRange()) {
    const page = Array.isArray(value) ? value : [value]
    for (const e of page)
      if (e.record.outcome === 'started') {
        e.record.subject = 'payments-agent'
        altered++
      }
    await db.put(k, value)
  }
  t.equal(altered, 1)
  await tp.close()

  tp = await startTestPlatform({ ...ON, 'platform.data-dir': dataDir }, { install })
  t.teardown(tp.close)
  t.notMatch(tp.logs, [{ msg: /^generated a commitment signing key/ }], 'the key was kept')
  const back = (await get(tp, '/commitments', TOKEN)).body
  t.same(
    back.map((r: any) => r.id),
    all.body.map((r: any) => r.id),
    'every record survived the restart'
  )
  t.same(
    back.map((r: any) => [r.outcome, r.subject, r.signed, r.verified]),
    [
      ['failed', 'weather-agent', false, false],
      ['completed', 'weather-agent', true, true],
      ['started', 'payments-agent', true, false],
      ['admit', 'weather-agent', true, true]
    ]
  )
  t.same((await get(tp, '/commitments/keys')).body.keys, keys, 'the same key after the restart')
  t.ok(readFileSync(keyFile, 'utf8').startsWith('-----BEGIN PRIVATE KEY-----'))
})

t.test('a signing key that does not load stops start-up with the key named', async (t) => {
  const junk = join(dir, 'junk.pem')
  writeFileSync(junk, 'not a key')
  await t.rejects(
    startTestPlatform({ ...ON, 'platform.ai.governance.commitment-records.key-file': junk }, { install }),
    {
      code: 'PLT_ERR_OPERATOR_MISTAKE',
      message:
        /^platform\.ai\.governance\.commitment-records\.key-file: .*junk\.pem is not a usable Ed25519 signing key/
    }
  )
  await t.rejects(
    startTestPlatform(
      { ...ON, 'platform.ai.governance.commitment-records.key-file': join(dir, 'nope.pem') },
      { install }
    ),
    { code: 'PLT_ERR_OPERATOR_MISTAKE', message: /nope\.pem does not exist/ }
  )
})

t.test('a configured key signs, and the listing is served with governance turned off', async (t) => {
  const keyFile = join(dir, 'operator.pem')
  const tp0 = await startTestPlatform(ON, { install })
  writeFileSync(keyFile, readFileSync(join(tp0.dataDir, 'commitment-signing-key.pem')), { mode: 0o600 })
  const kid = (await get(tp0, '/commitments/keys')).body.keys[0].kid
  await tp0.close()
  const tp = await startTestPlatform(
    { ...ON, 'platform.ai.governance.commitment-records.key-file': keyFile, 'platform.ai.governance.enabled': false },
    { install }
  )
  t.teardown(tp.close)
  const r = await tp.platform.area(COMMITMENTS).record(input)
  t.equal(r.proof.keyId, kid)
  t.same(
    (await get(tp, '/commitments', TOKEN)).body.map((x: any) => [x.id, x.verified]),
    [[r.id, true]]
  )
})

t.test('after a key change, records of the earlier key verify only while it is listed', async (t) => {
  const dataDir = join(dir, 'rotation')
  let tp = await startTestPlatform({ ...ON, 'platform.data-dir': dataDir }, { install })
  const before = await tp.platform.area(COMMITMENTS).record(input)
  await tp.close()
  const earlier = join(dir, 'earlier.pem')
  writeFileSync(earlier, readFileSync(join(dataDir, 'commitment-signing-key.pem')), { mode: 0o600 })
  rmSync(join(dataDir, 'commitment-signing-key.pem'))

  // a new key was generated: the old record is listed as signed but not verified
  tp = await startTestPlatform({ ...ON, 'platform.data-dir': dataDir }, { install })
  const after = await tp.platform.area(COMMITMENTS).record({ ...input, outcome: 'completed' })
  t.not(after.proof.keyId, before.proof.keyId)
  t.same(
    (await get(tp, '/commitments', TOKEN)).body.map((r: any) => [r.id, r.signed, r.verified]),
    [
      [after.id, true, true],
      [before.id, true, false]
    ]
  )
  await tp.close()

  const rotated = {
    ...ON,
    'platform.data-dir': dataDir,
    'platform.ai.governance.commitment-records.verify-key-files': [earlier]
  }
  tp = await startTestPlatform(rotated, { install })
  t.teardown(tp.close)
  t.same(
    (await get(tp, '/commitments', TOKEN)).body.map((r: any) => [r.id, r.verified]),
    [
      [after.id, true],
      [before.id, true]
    ]
  )
  t.same(
    (await get(tp, '/commitments/keys')).body.keys.map((k: any) => k.kid),
    [after.proof.keyId, before.proof.keyId]
  )
  const junk = join(dir, 'junk-verify.pem')
  writeFileSync(junk, 'not a key')
  await t.rejects(
    startTestPlatform(
      { ...rotated, 'platform.ai.governance.commitment-records.verify-key-files': [junk] },
      { install }
    ),
    {
      code: 'PLT_ERR_OPERATOR_MISTAKE',
      message: /^platform\.ai\.governance\.commitment-records\.verify-key-files: .*junk-verify\.pem is not a PEM key/
    }
  )
})

t.test(
  'the read flags: content reads opened by their flag, every read closed by http-read-auth-required',
  async (t) => {
    const open = await startTestPlatform({ ...ON, 'platform.admin.content-read-auth-required': false }, { install })
    t.teardown(open.close)
    t.same(await get(open, '/commitments'), { status: 200, body: [] })
    const closed = await startTestPlatform({ ...ON, 'platform.admin.http-read-auth-required': true }, { install })
    t.teardown(closed.close)
    for (const path of ['/commitments', '/commitments/keys']) {
      const r = await get(closed, path)
      t.equal(r.status, 401, path)
      t.equal(r.body.code, 'PLT_ERR_ADMIN_READ_AUTH_REQUIRED')
      t.equal((await get(closed, path, TOKEN)).status, 200)
    }
  }
)
