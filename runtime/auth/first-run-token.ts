/**
 * The first-run admin token: a platform started on this machine only, with no token configured,
 * makes one admin token so the dashboard works at once, as Jupyter's first start does. Only the
 * token's SHA-256 is kept (in the data directory); the token itself exists once, in the URL the
 * command line prints, and nowhere else: not in a log record, not on disk.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { CONFIG_ERRORS, type Config } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import { newToken, sha256Hex } from './token-secret.js'
import type { TokenConfig } from './principal.js'

export const FIRST_RUN_TOKEN_FILE = 'first-run-token.json'
export const FIRST_RUN_PRINCIPAL = 'first-run-admin'
const KEY = 'platform.auth.first-run-token'
const MAX_FILE_BYTES = 4096

export interface FirstRunToken {
  /** The token entry the platform accepts: hash, principal and the admin role. */
  entry: TokenConfig & { sha256: string }
  /** The file holding the hash. */
  file: string
  /** The token itself, only when it was made by this start; a restart reads the hash alone. */
  token?: string
}

/** 127.0.0.0/8, ::1 and localhost: an address no other machine reaches. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1'
}

/**
 * The first-run token of this start, or undefined when it does not apply: switched off, tokens
 * configured, no dashboard, or a bind other machines reach (there a token printed to a terminal is no answer to
 * who may administer the platform). A file that is not ours alone stops start-up: whoever can
 * write it chooses the admin token.
 */
export function firstRunToken(config: Config): FirstRunToken | undefined {
  // the token is printed as a dashboard URL: without the dashboard nobody would ever see it
  if (!config.get(KEY) || !config.get('platform.admin.enabled')) return undefined
  if (config.get('platform.auth.tokens').length > 0) return undefined
  if (!isLoopbackHost(config.get('platform.server.host'))) return undefined
  const dir = resolve(config.get('platform.data-dir'))
  const file = join(dir, FIRST_RUN_TOKEN_FILE)
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
  } catch (err) {
    throw operatorMistake(`${KEY}: cannot create the data directory ${dir}: ${(err as Error).message}`)
  }
  const kept = readKept(file)
  if (kept !== undefined) return { entry: kept, file }
  const token = newToken()
  const entry = { sha256: sha256Hex(token), principal: FIRST_RUN_PRINCIPAL, roles: ['admin'] }
  write(file, JSON.stringify({ ...entry, createdAt: new Date().toISOString() }) + '\n')
  return { entry, file, token }
}

function readKept(file: string): FirstRunToken['entry'] | undefined {
  let fd: number
  try {
    // O_NOFOLLOW: a symlink planted in the data directory is refused, not followed
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw operatorMistake(`${KEY}: cannot read ${file}: ${(err as Error).message}; delete it to make a new token`)
  }
  let text: string
  try {
    const st = fstatSync(fd)
    if (!st.isFile() || st.size > MAX_FILE_BYTES)
      throw operatorMistake(`${KEY}: ${file} is not the small regular file the platform writes; delete it`)
    const uid = process.getuid?.()
    if ((uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0)
      throw operatorMistake(
        `${KEY}: ${file} must belong to this user with mode 0600 (anyone who can change it picks the admin token): chmod 600 it or delete it`
      )
    const buf = Buffer.alloc(st.size)
    let n = 0
    for (let got; n < buf.length && (got = readSync(fd, buf, n, buf.length - n, null)) > 0;) n += got
    text = buf.subarray(0, n).toString('utf8')
  } finally {
    closeSync(fd)
  }
  let kept: unknown
  try {
    kept = JSON.parse(text)
  } catch {
    kept = undefined
  }
  const k = kept as { sha256?: unknown; principal?: unknown; roles?: unknown } | undefined
  if (
    typeof k?.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(k.sha256) ||
    typeof k.principal !== 'string' ||
    k.principal === '' ||
    !Array.isArray(k.roles) ||
    !k.roles.every((r) => typeof r === 'string')
  )
    throw operatorMistake(`${KEY}: ${file} is not a first-run token file; delete it to make a new token`)
  return { sha256: k.sha256, principal: k.principal, roles: k.roles as string[] }
}

function write(file: string, text: string): void {
  let fd: number
  try {
    // O_EXCL: never over an existing file, and never through a symlink that appeared meanwhile
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
  } catch (err) {
    throw operatorMistake(`${KEY}: cannot write ${file}: ${(err as Error).message}`)
  }
  try {
    writeSync(fd, text)
  } finally {
    closeSync(fd)
  }
}

function operatorMistake(detail: string): PlatformError {
  return new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, { detail })
}
