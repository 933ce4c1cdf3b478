import t from 'tap'
import { readFileSync } from 'node:fs'
import { PlatformError, defineErrors, mergeErrors } from '../../runtime/contracts/index.js'
import { errorTable } from '../../runtime/http/index.js'
// platform.ts before areas.ts: a test whose first runtime import is areas.ts never starts under tap's loader
import '../../runtime/platform.js'
import { errorCatalogue } from '../../runtime/areas.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const catalogue = errorCatalogue()
const codes = Object.values(catalogue).map((d) => d.code)

t.test('every error code of the union is documented in README.md', async (t) => {
  for (const code of codes) t.ok(readme.includes(`\`${code}\``), code)
  t.ok(
    readme.includes(errorTable(catalogue)),
    'README error table is current: run `npm run build && npm run config-docs`'
  )
})

t.test('no stale codes are documented', async (t) => {
  const documented = [...readme.matchAll(/`(PLT_ERR_[A-Z0-9_]+)`/g)].map((m) => m[1])
  const known = new Set<string>(codes)
  for (const c of documented) t.ok(known.has(c!), `${c} is in the catalogue`)
})

t.test(
  'every entry builds a well-formed body with a 4xx/5xx status, or 200 for an in-band JSON-RPC error',
  async (t) => {
    for (const def of Object.values(catalogue)) {
      const e = new PlatformError(def, {})
      t.ok((e.status >= 400 && e.status < 600) || (e.status === 200 && def.rpcCode !== undefined), def.name)
      const body = e.body()
      t.equal(body.code, `PLT_ERR_${def.name}`)
      t.type(body.error, 'string')
      t.ok((body.error as string).length > 0)
    }
  }
)

t.test('defineErrors stamps name and code, and refuses a name that is not UPPER_SNAKE', async (t) => {
  const defs = defineErrors({ SOME_FAILURE: { status: 409, message: (p) => `no ${p.id}`, hint: 'h' } })
  t.equal(defs.SOME_FAILURE.code, 'PLT_ERR_SOME_FAILURE')
  const e = new PlatformError(defs.SOME_FAILURE, { id: 'x' }, { extra: { more: 1 } })
  t.same(e.body(), { error: 'no x', code: 'PLT_ERR_SOME_FAILURE', hint: 'h', more: 1 })
  t.ok(e.is(defs.SOME_FAILURE))
  t.throws(() => defineErrors({ 'bad-name': { status: 400, message: 'm' } }), /not UPPER_SNAKE_CASE/)
})

t.test('a code declared by two owners is refused, naming both', async (t) => {
  const a = defineErrors({ CLASH: { status: 400, message: 'a' } })
  const b = defineErrors({ CLASH: { status: 404, message: 'b' } })
  t.throws(
    () =>
      mergeErrors([
        { owner: 'one', errors: a },
        { owner: 'two', errors: b }
      ]),
    /PLT_ERR_CLASH is declared by both "one" and "two"/
  )
})
