import { createHash } from 'node:crypto'

/** Reference PolicyHashDigest.forIdentity: `sha256:` + hex(SHA-256(name|source|version + "\n")). */
export function policyDigest(name: string, source: string, version: string): string {
  return 'sha256:' + createHash('sha256').update(`${name}|${source}|${version}\n`).digest('hex')
}
