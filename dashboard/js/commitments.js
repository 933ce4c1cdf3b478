// Commitment records with a badge from the browser's own signature check, not the server's word:
// the bytes signed are the JCS form (RFC 8785) of the record without `proof`; the listing's own
// members (eventTimestamp, signed, verified) are not part of the record. The key is the one the
// keys route publishes under the proof's keyId; Ed25519 runs in WebCrypto.
import canonicalize from '../vendor/canonicalize.js'
import { el, table, badge, time } from './api.js'

const LISTING_MEMBERS = ['proof', 'eventTimestamp', 'signed', 'verified']
const SIGNATURE = /^[A-Za-z0-9_-]{86}$/

const VERDICTS = {
  verified: ['verified', 'ok', 'The Ed25519 signature checks against the published key'],
  invalid: ['invalid', 'bad', 'The signature does not match this record: it was altered or signed by another key'],
  unsigned: ['unsigned', 'unsigned', 'Issued without a signer: nothing to check'],
  unchecked: ['not checked', 'warn', 'This browser cannot check Ed25519 here (WebCrypto needs HTTPS or localhost)']
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`

function bytesOf(base64url) {
  const b64 = base64url.replace(/-/g, '+').replace(/_/g, '/') + '=='
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
}

/** keyId → CryptoKey for every published key this browser can import. */
async function importKeys(jwks) {
  const keys = new Map()
  if (globalThis.crypto?.subtle === undefined) return undefined
  for (const jwk of jwks.keys ?? []) {
    try {
      keys.set(jwk.kid, await crypto.subtle.importKey('jwk', jwk, { name: 'Ed25519' }, false, ['verify']))
    } catch {
      return undefined
    }
  }
  return keys
}

/** 'verified' | 'invalid' | 'unsigned' | 'unchecked' for one listing row. */
export async function checkCommitment(row, keys) {
  const proof = row.proof
  if (proof === null || typeof proof !== 'object' || proof.scheme === 'none' || !proof.signature) return 'unsigned'
  if (keys === undefined) return 'unchecked'
  const key = keys.get(proof.keyId)
  if (proof.scheme !== 'Ed25519' || key === undefined || !SIGNATURE.test(proof.signature)) return 'invalid'
  const record = { ...row }
  for (const m of LISTING_MEMBERS) delete record[m]
  try {
    const data = new TextEncoder().encode(canonicalize(record))
    return (await crypto.subtle.verify('Ed25519', key, bytesOf(proof.signature), data)) ? 'verified' : 'invalid'
  } catch {
    return 'invalid'
  }
}

function verdictBadge(verdict, row) {
  const [label, kind, title] = VERDICTS[verdict]
  const b = badge(label, `verdict ${kind}`)
  b.title = title
  b.dataset.verdict = verdict
  // the server checked too: a disagreement is worth seeing
  const browserSays = verdict === 'verified'
  if (verdict !== 'unchecked' && browserSays !== Boolean(row.verified))
    return el('span', {}, b, badge(`server says ${row.verified ? 'verified' : 'not verified'}`, 'warn'))
  return b
}

/** The Commitments card's body: the rows of the listing, each with its verdict. */
export async function commitmentsView(rows, jwks) {
  if (!Array.isArray(rows) || rows.length === 0)
    return el(
      'p',
      { class: 'empty' },
      (jwks.keys ?? []).length === 0
        ? 'Commitment records are off on this platform (platform.ai.governance.commitment-records.enabled).'
        : 'No commitment records yet: they are written when a coordinator dispatches an agent.'
    )
  const keys = await importKeys(jwks)
  const verdicts = await Promise.all(rows.map((r) => checkCommitment(r, keys)))
  const at = new Map(rows.map((r, i) => [r, verdicts[i]]))
  const counts = {}
  for (const v of verdicts) counts[v] = (counts[v] ?? 0) + 1
  return el(
    'div',
    {},
    el(
      'p',
      { class: 'commitment-summary' },
      Object.keys(VERDICTS)
        .filter((v) => counts[v] !== undefined)
        .map((v) => badge(`${counts[v]} ${VERDICTS[v][0]}`, `verdict ${VERDICTS[v][1]}`))
    ),
    table(
      [
        { label: 'Issued', value: (r) => time(r.issuedAt) },
        { label: 'Coordination', value: (r) => r.coordinationId },
        { label: 'Issuer', value: (r) => r.issuer },
        { label: 'Agent', value: (r) => r.subject },
        { label: 'Skill', value: (r) => r.scope },
        { label: 'Principal', value: (r) => r.principal },
        {
          label: 'Outcome',
          value: (r) => badge(r.outcome, r.outcome === 'deny' || r.outcome === 'failed' ? 'bad' : '')
        },
        {
          label: 'Arguments',
          value: (r) =>
            el(
              'details',
              {},
              el('summary', {}, plural(Object.keys(r.properties ?? {}).length, 'argument')),
              el(
                'pre',
                {},
                JSON.stringify(
                  { properties: r.properties, delegationChain: r.delegationChain, expiresAt: r.expiresAt, id: r.id },
                  null,
                  2
                )
              )
            )
        },
        { label: 'Key', value: (r) => el('code', {}, r.proof?.keyId ?? '') },
        { label: 'Signature', value: (r) => verdictBadge(at.get(r), r) }
      ],
      rows
    )
  )
}
