// The commitment log and its Ed25519 signer without a platform: what is signed, the key id, a
// third party's check from the published JWK alone, tampering, unsigned records, bad input,
// bad key files, and records kept in LMDB across a reopen.
import t from 'tap'
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import canonicalize from 'canonicalize'
import { SignedCommitmentLog, isSigned } from '../../runtime/governance/commitment-log.js'
import {
  Ed25519Signer,
  keyIdOf,
  loadSigningKey,
  loadVerifyKey,
  signedBytes
} from '../../runtime/governance/commitment-signer.js'
import { recordedEventFields } from '../../runtime/governance/index.js'
import { type CommitmentInput, type CommitmentRecord, type LoggedCommitment } from '../../runtime/contracts/index.js'
import { Store } from '../../runtime/store/index.js'

const input: CommitmentInput = {
  coordinationId: 'coord-1',
  issuer: 'coordinator:planner',
  principal: 'alice',
  subject: 'weather-agent',
  scope: 'forecast',
  outcome: 'started',
  delegationChain: ['user:alice'],
  properties: { city: 'Zürich', days: 3, nested: { b: [1, 2], a: null } }
}

const dir = mkdtempSync(join(tmpdir(), 'commitments-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('keyId is ed25519: + 16 hex of the SHA-256 of the SPKI DER', async (t) => {
  const s = Ed25519Signer.generate()
  const der = s.publicKey.export({ type: 'spki', format: 'der' })
  t.equal(s.keyId, 'ed25519:' + createHash('sha256').update(der).digest('hex').slice(0, 16))
  t.match(s.keyId, /^ed25519:[0-9a-f]{16}$/)
  const jwk = s.jwk()
  t.same(
    { kty: jwk.kty, crv: jwk.crv, kid: jwk.kid, alg: jwk.alg },
    {
      kty: 'OKP',
      crv: 'Ed25519',
      kid: s.keyId,
      alg: 'EdDSA'
    }
  )
})

t.test('a record is signed over the JCS form without proof, checkable from the JWK alone', async (t) => {
  const signer = Ed25519Signer.generate()
  const log = new SignedCommitmentLog({ signer })
  const seen: CommitmentRecord[] = []
  log.onRecord((r) => seen.push(r))
  log.onRecord(() => {
    throw new Error('a broken listener')
  })
  const r = await log.record(input)
  t.match(r.id, /^cmt-[0-9a-f-]{36}$/)
  t.equal(r.proof.scheme, 'Ed25519')
  t.equal(r.proof.keyId, signer.keyId)
  t.match(r.proof.signature, /^[A-Za-z0-9_-]{86}$/, 'base64url without padding')
  t.equal(r.proof.createdAt, r.issuedAt)
  t.equal(Date.parse(r.expiresAt) - Date.parse(r.issuedAt), 3600_000, 'one hour by default')
  t.same(seen, [r], 'onRecord saw it; a throwing listener did not stop it')
  t.ok(isSigned(r))
  t.ok(log.verify(r))
  t.throws(
    () => {
      ;(r.properties as { days: number }).days = 4
    },
    TypeError,
    'the kept record cannot be changed behind the log'
  )
  t.same(recordedEventFields(r), {
    subject: 'weather-agent',
    issuer: 'coordinator:planner',
    outcome: 'started',
    scope: 'forecast',
    signatureScheme: 'Ed25519',
    signatureKeyId: signer.keyId,
    signed: true
  })

  // a third party: JSON text in, the published JWK, the canonicalize package, node:crypto
  const wire = JSON.parse(JSON.stringify(r)) as Record<string, unknown>
  const proof = wire.proof as { signature: string }
  delete wire.proof
  const key = createPublicKey({ key: { ...signer.jwk() }, format: 'jwk' })
  const bytes = Buffer.from(canonicalize(wire)!, 'utf8')
  t.ok(verify(null, bytes, key, Buffer.from(proof.signature, 'base64url')), 'verifies outside the log')
  t.same(bytes, signedBytes(r))
  t.match(bytes.toString(), /^\{"coordinationId":"coord-1","delegationChain":\["user:alice"\],"expiresAt":/)
})

t.test('every member is covered: a change anywhere fails the check', async (t) => {
  const log = new SignedCommitmentLog({ signer: Ed25519Signer.generate() })
  const r = await log.record(input)
  const edits: [string, (c: any) => void][] = [
    ['subject', (c) => (c.subject = 'other-agent')],
    ['outcome', (c) => (c.outcome = 'completed')],
    ['a property', (c) => (c.properties.days = 4)],
    ['a nested property', (c) => (c.properties.nested.a = 0)],
    ['the chain', (c) => c.delegationChain.push('agent:x')],
    ['expiry', (c) => (c.expiresAt = '2999-01-01T00:00:00.000Z')],
    ['an added member', (c) => (c.extra = true)],
    // the first character: all six of its bits are signature bits (the last one's low bits are
    // padding, and a signature that already ended in 'AA' was left as it was, 1 run in 256)
    [
      'the signature',
      (c) => (c.proof.signature = (c.proof.signature[0] === 'A' ? 'B' : 'A') + c.proof.signature.slice(1))
    ],
    ['the key id', (c) => (c.proof.keyId = 'ed25519:0000000000000000')],
    ['the scheme', (c) => (c.proof.scheme = 'none')],
    ['a padded signature', (c) => (c.proof.signature += '==')]
  ]
  for (const [what, edit] of edits) {
    const copy = structuredClone(r)
    edit(copy)
    t.equal(log.verify(copy), false, what)
  }
  t.ok(log.verify(structuredClone(r)), 'an unaltered copy still verifies')
  // another key's valid signature is not ours
  const other = await new SignedCommitmentLog({ signer: Ed25519Signer.generate() }).record(input)
  t.equal(log.verify(other), false)
})

t.test('without a signer the proof is the unsigned one and nothing verifies', async (t) => {
  const log = new SignedCommitmentLog()
  const r = await log.record(input)
  t.same(r.proof, { scheme: 'none', keyId: '', signature: '', createdAt: '1970-01-01T00:00:00.000Z' })
  t.equal(isSigned(r), false)
  t.equal(log.verify(r), false)
  t.same(log.keys(), [])
})

t.test('bad input is refused with the member named and nothing kept', async (t) => {
  const log = new SignedCommitmentLog({ signer: Ed25519Signer.generate() })
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ subject: '' }, /subject must be a non-empty string/],
    [{ issuer: 7 }, /issuer must be a non-empty string/],
    [{ principal: null }, /principal must be a string/],
    [{ outcome: 'maybe' }, /outcome must be one of admit, deny, transform, started, completed, failed/],
    [{ delegationChain: ['a', 1] }, /delegationChain must be an array of strings/],
    [{ properties: [] }, /properties must be an object/],
    [{ properties: { n: NaN } }, /properties is not JSON: NaN is not allowed/],
    [{ properties: { s: '\uD800' } }, /properties is not JSON: Lone surrogate/],
    [{ expiresAt: 'tomorrow' }, /expiresAt must be an ISO 8601 timestamp/],
    [{ subject: 'a\uDC00' }, /the record is not JSON: Lone surrogate is not allowed/],
    // msgpack's decoder renames `__proto__`, so such a record would stop verifying after a restart
    [{ properties: JSON.parse('{"a":[{"__proto__":1}]}') }, /properties holds a "__proto__" member/]
  ]
  for (const [change, message] of bad)
    await t.rejects(log.record({ ...input, ...change } as unknown as CommitmentInput), {
      code: 'PLT_ERR_COMMITMENT_INVALID',
      message
    })
  t.same(log.recent(10), [])
  // undefined members and Dates become what JSON makes of them, so the stored record is the signed one
  const r = await log.record({ ...input, properties: { when: new Date(0), gone: undefined } })
  t.same(r.properties, { when: '1970-01-01T00:00:00.000Z' })
  t.ok(log.verify(r))
})

t.test('append keeps records issued elsewhere as they are; recent is newest first', async (t) => {
  const log = new SignedCommitmentLog({ signer: Ed25519Signer.generate() })
  const unsigned = new SignedCommitmentLog().issue(input)
  const foreign = new SignedCommitmentLog({ signer: Ed25519Signer.generate() }).issue(input)
  const own = await log.record(input)
  await log.append(unsigned)
  await log.append(foreign)
  t.same(
    log.recent(10).map((e) => e.record.id),
    [foreign.id, unsigned.id, own.id]
  )
  t.same(log.recent(2).length, 2)
  t.same(log.recent(0), [])
  t.same(log.recent(-5), [])
  t.same(
    log.recent(10).map((e) => log.verify(e.record)),
    [false, false, true]
  )
  t.match(log.recent(1)[0]!.eventTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  await t.rejects(log.append({ ...own, proof: undefined } as unknown as CommitmentRecord), {
    code: 'PLT_ERR_COMMITMENT_INVALID'
  })
  await t.rejects(log.append({ ...own, signed: true } as unknown as CommitmentRecord), {
    message: /signed is reserved/
  })
  await t.rejects(log.append({ ...own, subject: 3 } as unknown as CommitmentRecord), { message: /subject/ })
  t.equal(log.recent(10).length, 3, 'refused records were not kept')
})

t.test('records survive a reopen of the store and still verify', async (t) => {
  const path = join(dir, 'lmdb')
  const signer = Ed25519Signer.generate()
  let store = new Store(path)
  let log = new SignedCommitmentLog({ signer, db: store.db<LoggedCommitment, [number, number]>('commitments') })
  const a = await log.record(input)
  const b = await log.record({ ...input, outcome: 'completed' })
  await store.close()
  store = new Store(path)
  log = new SignedCommitmentLog({ signer, db: store.db<LoggedCommitment, [number, number]>('commitments') })
  const back = log.recent(10)
  t.same(
    back.map((e) => e.record),
    [b, a]
  )
  t.same(
    back.map((e) => log.verify(e.record)),
    [true, true]
  )
  await store.close()
})

t.test('the key file: generated 0600 when allowed, refused when missing, foreign or broken', async (t) => {
  const path = join(dir, 'key.pem')
  const made = loadSigningKey(path, true, 'k')
  t.equal(made.generated, true)
  t.equal(statSync(path).mode & 0o777, 0o600)
  t.match(readFileSync(path, 'utf8'), /^-----BEGIN PRIVATE KEY-----/)
  const again = loadSigningKey(path, true, 'k')
  t.equal(again.generated, false, 'an existing key is read, never replaced')
  t.equal(again.signer.keyId, made.signer.keyId)
  t.equal(again.exposed, false)

  t.throws(() => loadSigningKey(join(dir, 'absent.pem'), false, 'the.key'), {
    code: 'PLT_ERR_OPERATOR_MISTAKE',
    message: /^the\.key: .*absent\.pem does not exist/
  })
  const rsa = join(dir, 'rsa.pem')
  writeFileSync(
    rsa,
    generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' })
  )
  t.throws(() => loadSigningKey(rsa, false, 'k'), {
    message: /not a usable Ed25519 signing key \(expected an Ed25519 private key, got rsa\)/
  })
  const junk = join(dir, 'junk.pem')
  writeFileSync(junk, '-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n')
  t.throws(() => loadSigningKey(junk, false, 'k'), {
    code: 'PLT_ERR_OPERATOR_MISTAKE',
    message: /not a usable Ed25519 signing key/
  })
  const publicOnly = join(dir, 'public.pem')
  writeFileSync(publicOnly, made.signer.publicKey.export({ type: 'spki', format: 'pem' }))
  t.throws(() => loadSigningKey(publicOnly, false, 'k'), { message: /not an unencrypted PKCS#8 PEM private key/ })
  const open = join(dir, 'open.pem')
  writeFileSync(open, made.signer.pkcs8Pem(), { mode: 0o644 })
  t.equal(loadSigningKey(open, false, 'k').exposed, true)
})

t.test('earlier keys keep their records verifying after a key change', async (t) => {
  const old = Ed25519Signer.generate()
  const r = await new SignedCommitmentLog({ signer: old }).record(input)
  const current = Ed25519Signer.generate()
  t.equal(new SignedCommitmentLog({ signer: current }).verify(r), false, 'the new key alone does not vouch for it')
  const log = new SignedCommitmentLog({ signer: current, verifyKeys: [old.publicKey, current.publicKey] })
  t.ok(log.verify(r))
  t.same(
    log.keys().map((k) => k.kid),
    [current.keyId, old.keyId],
    'published once each, the signing key first'
  )
  const publicPem = join(dir, 'old-public.pem')
  writeFileSync(publicPem, old.publicKey.export({ type: 'spki', format: 'pem' }))
  t.equal(keyIdOf(loadVerifyKey(publicPem, 'k')), old.keyId)
  const privatePem = join(dir, 'old-private.pem')
  writeFileSync(privatePem, old.pkcs8Pem(), { mode: 0o600 })
  t.equal(keyIdOf(loadVerifyKey(privatePem, 'k')), old.keyId, 'the private key file works too')
  const rsa = join(dir, 'rsa-public.pem')
  writeFileSync(
    rsa,
    generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' })
  )
  t.throws(() => loadVerifyKey(rsa, 'v'), {
    code: 'PLT_ERR_OPERATOR_MISTAKE',
    message: /^v: .* is not an Ed25519 key \(got rsa\)/
  })
  t.throws(() => loadVerifyKey(join(dir, 'missing.pem'), 'v'), {
    code: 'PLT_ERR_OPERATOR_MISTAKE',
    message: /cannot read/
  })
})
