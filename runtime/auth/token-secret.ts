import { createHash, randomBytes } from 'node:crypto'

/** A new token: 32 random bytes, base64url, with a prefix that secret scanners and people recognise. */
export function newToken(): string {
  return 'plt_' + randomBytes(32).toString('base64url')
}

/** The digest a configuration or the data directory keeps in place of a token. */
export const sha256Hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex')
