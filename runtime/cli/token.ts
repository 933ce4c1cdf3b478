import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { isMap, isSeq, parseDocument, YAMLSeq, type Document } from 'yaml'
import { newToken, sha256Hex } from '../auth/index.js'

export const TOKEN_USAGE = `Usage: platform token create --principal NAME [--role ROLE ...] [--config FILE]

  Prints a new API token once. With --config, its SHA-256 joins platform.auth.tokens in FILE (created
  when missing; comments and other keys are kept); without, the YAML entry to paste is printed.
  The token itself is stored nowhere: lose it and create another.`

type Out = { log: (s: string) => void; error: (s: string) => void }

const NAME = /^[A-Za-z0-9_.:@-]{1,128}$/
const KEY = 'platform.auth.tokens'

/** `platform token create`: the exit code. */
export function tokenCreate(
  sub: string | undefined,
  opts: { principal?: string; role?: string[]; config?: string },
  out: Out
): number {
  if (sub !== 'create') {
    out.error(
      `platform: ${sub === undefined ? 'token needs a subcommand' : `unknown token subcommand '${sub}'`}\n\n${TOKEN_USAGE}`
    )
    return 2
  }
  const principal = opts.principal
  const roles = opts.role ?? []
  if (principal === undefined || !NAME.test(principal)) {
    out.error(
      `platform: token create needs --principal NAME (letters, digits and _.:@-, at most 128)\n\n${TOKEN_USAGE}`
    )
    return 2
  }
  const bad = roles.find((r) => !NAME.test(r))
  if (bad !== undefined) {
    out.error(`platform: --role '${bad}' is not a role name (letters, digits and _.:@-, at most 128)`)
    return 2
  }
  const token = newToken()
  const entry = { sha256: sha256Hex(token), principal, ...(roles.length > 0 ? { roles } : {}) }
  if (opts.config !== undefined) {
    try {
      addToFile(opts.config, entry)
    } catch (e) {
      out.error(`platform: ${opts.config}: ${(e as Error).message}; nothing was written`)
      return 1
    }
    out.error(`token for ${principal} added to ${opts.config} (only its SHA-256); restart the platform to use it`)
  } else {
    out.error('add this entry under platform.auth.tokens in your configuration (only the SHA-256 is kept):')
    out.error(
      `  - { sha256: ${entry.sha256}, principal: ${JSON.stringify(principal)}, roles: ${JSON.stringify(roles)} }`
    )
  }
  out.error('the token (shown once, keep it secret):')
  out.log(token)
  return 0
}

/** Appends `entry` to platform.auth.tokens, nested or dotted, keeping the file's comments and layout. */
function addToFile(file: string, entry: Record<string, unknown>): void {
  const exists = existsSync(file)
  const doc: Document = parseDocument(exists ? readFileSync(file, 'utf8') : '')
  if (doc.errors.length > 0) throw new Error(`not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`)
  if (doc.contents !== null && !isMap(doc.contents)) throw new Error('the file is not a YAML mapping')
  const dotted = doc.get(KEY, true)
  const nested = doc.getIn(['platform', 'auth', 'tokens'], true)
  const seq = dotted ?? nested
  if (seq !== undefined && !isSeq(seq)) throw new Error(`${KEY} is not a list`)
  if (seq !== undefined) (seq as YAMLSeq).add(doc.createNode(entry))
  else doc.setIn(['platform', 'auth', 'tokens'], doc.createNode([entry]))
  // written aside then renamed: a crash never leaves half a configuration file
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, doc.toString(), { mode: exists ? statSync(file).mode & 0o777 : 0o600 })
  renameSync(tmp, file)
}
