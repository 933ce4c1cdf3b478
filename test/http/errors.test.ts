import t from 'tap'
import { readFileSync } from 'node:fs'
import { ERRORS, errorCodes } from '../../runtime/http/errors.js'
import { PlatformError, type ErrorName } from '../../runtime/http/index.js'
import { errorTable } from '../../runtime/http/index.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

t.test('every error code is documented in README.md', async (t) => {
  for (const code of errorCodes()) t.ok(readme.includes(`\`${code}\``), code)
  t.ok(readme.includes(errorTable()), 'README error table is current: run `npm run build && npm run config-docs`')
})

t.test('no stale codes are documented', async (t) => {
  const documented = [...readme.matchAll(/`(PLT_ERR_[A-Z0-9_]+)`/g)].map((m) => m[1])
  const known = new Set(errorCodes())
  for (const c of documented) t.ok(known.has(c!), `${c} is in the catalogue`)
})

t.test('every entry builds a well-formed body with a 4xx/5xx status', async (t) => {
  for (const name of Object.keys(ERRORS) as ErrorName[]) {
    const e = new PlatformError(name, {})
    t.ok(e.status >= 400 && e.status < 600, name)
    const body = e.body()
    t.equal(body.code, `PLT_ERR_${name}`)
    t.type(body.error, 'string')
    t.ok((body.error as string).length > 0)
  }
})
