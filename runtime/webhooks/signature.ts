/**
 * Webhook signatures in the Standard Webhooks form: `webhook-signature: v1,<base64 HMAC-SHA256>`
 * over `<webhook-id>.<webhook-timestamp>.<body>`, the timestamp in Unix seconds. A receiver that
 * knows the secret checks the body came from this server and, by the timestamp, that it is fresh.
 */
import { createHmac } from 'node:crypto'
import { readRegularFile, CONFIG_ERRORS, type Config } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'

/** The Standard Webhooks prefix of a secret given as base64 bytes. */
const PREFIX = 'whsec_'
const MIN_KEY_BYTES = 16
const MIN_SECRET_CHARS = 24

/**
 * The signing key from `platform.webhooks.secret` or `platform.webhooks.secret-file`; undefined when
 * neither is set. A secret too short to be a key, or a file that cannot be read, stops start-up;
 * the messages never show the secret.
 */
export function signingKey(config: Config): Buffer | undefined {
  const inline = config.get('platform.webhooks.secret')
  const file = config.get('platform.webhooks.secret-file')
  if (inline !== undefined && file !== undefined)
    throw operator('platform.webhooks.secret and platform.webhooks.secret-file are both set; keep one')
  let secret = inline
  if (file !== undefined) {
    try {
      secret = readRegularFile(file, 4096).toString('utf8').trim()
    } catch (err) {
      throw operator(`platform.webhooks.secret-file ${file}: ${(err as Error).message}`)
    }
  }
  if (secret === undefined) return undefined
  if (secret.startsWith(PREFIX)) {
    const key = Buffer.from(secret.slice(PREFIX.length), 'base64')
    if (key.length < MIN_KEY_BYTES)
      throw operator(
        `the webhook secret's whsec_ key decodes to ${key.length} bytes; it needs at least ${MIN_KEY_BYTES}`
      )
    return key
  }
  if (secret.length < MIN_SECRET_CHARS)
    throw operator(`the webhook secret has ${secret.length} characters; it needs at least ${MIN_SECRET_CHARS}`)
  return Buffer.from(secret, 'utf8')
}

function operator(detail: string): PlatformError {
  return new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, { detail })
}

/** The `webhook-signature` value of one delivery attempt. */
export function signature(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}
