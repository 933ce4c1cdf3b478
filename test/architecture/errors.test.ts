/**
 * One error type: a failure is a code an area declares (`defineErrors` in `runtime/<area>/errors.ts`),
 * raised as a `PlatformError`; no other class extends Error. Codes are unique across the union and
 * every declared code reaches it through its area's `Area.errors`.
 */
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineErrors, type ErrorDefs } from '../../runtime/contracts/index.js'
// platform.ts before areas.ts: a test whose first runtime import is areas.ts never starts under tap's loader
import { CORE_ERRORS, type Area } from '../../runtime/platform.js'
import { AREAS, errorCatalogue } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const RUNTIME = join(ROOT, 'runtime')

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** Every `class X extends Y` whose Y is an Error (by name, or a class found here that is one). */
function errorClasses(): Map<string, string> {
  const decls: { name: string; base: string; file: string }[] = []
  for (const f of files(RUNTIME)) {
    for (const m of readFileSync(f, 'utf8').matchAll(/\bclass\s+(\w+)(?:<[^>]*>)?\s+extends\s+([\w.]+)/g))
      decls.push({ name: m[1]!, base: m[2]!, file: relative(ROOT, f) })
  }
  const found = new Map<string, string>()
  for (let grew = true; grew;) {
    grew = false
    for (const d of decls) {
      if (found.has(d.name)) continue
      if (/(Error|Exception)$/.test(d.base) || found.has(d.base)) {
        found.set(d.name, d.file)
        grew = true
      }
    }
  }
  return found
}

t.test('no runtime class extends Error but PlatformError: a failure is a code', async (t) => {
  const found = errorClasses()
  t.equal(found.get('PlatformError'), 'runtime/contracts/platform-error.ts', 'the one error class')
  for (const [name, file] of found) {
    if (name === 'PlatformError') continue
    t.fail(
      `${file} declares error class ${name}: declare a code with defineErrors in the area's errors.ts ` +
        'and throw new PlatformError(AREA_ERRORS.NAME, params) instead (see docs/architecture.md)'
    )
  }
})

t.test('codes are unique across the core and every area, and each area lists its own', async (t) => {
  const catalogue = errorCatalogue()
  const count = [...CORE_ERRORS.map((s) => s.errors), ...AREAS.flatMap((a) => (a.errors ? [a.errors] : []))]
    .map((e) => Object.keys(e).length)
    .reduce((a, b) => a + b, 0)
  t.equal(Object.keys(catalogue).length, count, 'no code is declared twice')
  const known = new Set(Object.values(catalogue).map((d) => d.code))
  // every defineErrors in runtime/ reaches the union: an area that forgets Area.errors is caught
  for (const f of files(RUNTIME)) {
    const text = readFileSync(f, 'utf8')
    if (!/=\s*defineErrors\(/.test(text) || f.includes(`${join('runtime', 'contracts')}`)) continue
    const mod = (await import(f)) as Record<string, unknown>
    for (const [exported, defs] of Object.entries(mod)) {
      if (!exported.endsWith('_ERRORS')) continue
      for (const d of Object.values(defs as ErrorDefs))
        t.ok(known.has(d.code), `${relative(ROOT, f)} declares ${d.code}, which no Area.errors lists`)
    }
  }
})

t.test('an area declaring a code another declares stops start-up, naming both', async (t) => {
  const clashing: Area = {
    name: 'clashing',
    dependsOn: [],
    errors: defineErrors({ NOT_FOUND: { status: 404, message: 'again' } }),
    install: () => {}
  }
  await t.rejects(startTestPlatform({}, { install: (p) => p.use(clashing) }), {
    message: 'error code PLT_ERR_NOT_FOUND is declared by both "http" and "clashing"'
  })
  const own: Area = {
    name: 'own',
    dependsOn: [],
    errors: defineErrors({ OWN_FAILURE: { status: 409, message: 'own' } }),
    install: () => {}
  }
  const tp = await startTestPlatform({}, { install: (p) => p.use(own) })
  t.teardown(tp.close)
  t.equal(tp.platform.errors.OWN_FAILURE?.code, 'PLT_ERR_OWN_FAILURE', 'an installed area adds its codes')
})
