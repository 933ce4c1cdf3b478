import t from 'tap'
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform } from '../helpers/platform.js'
import { installAreas } from '../../runtime/areas.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'

const dir = mkdtempSync(join(tmpdir(), 'gov-watch-'))
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true })
})
const file = join(dir, 'rules.yaml')
const doc = (blocked: string) =>
  `name: watched\nrules:\n  - name: block\n    condition: {field: tool_name, operator: eq, value: ${blocked}}\n    action: deny\n    message: ${blocked} is blocked\ndefaults:\n  action: allow\n`
writeFileSync(file, doc('drop_table'))

const tp = await startTestPlatform(
  { 'platform.ai.governance.policy-files': [file], 'platform.ai.governance.watch-interval-ms': 25 },
  { install: (p) => installAreas(p, [scopeArea, governanceArea]) }
)
t.teardown(tp.close)

async function check(tool: string): Promise<{ allowed: boolean; reason: string }> {
  const r = await fetch(`${tp.url}/api/admin/governance/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ context: { tool_name: tool } })
  })
  return (await r.json()) as { allowed: boolean; reason: string }
}
async function fileStatus(): Promise<Record<string, unknown>> {
  const h = (await (await fetch(`${tp.url}/api/admin/governance/health`)).json()) as {
    policyFiles: Record<string, unknown>[]
  }
  return h.policyFiles[0]!
}
/** Polls (bounded: 5 s) until `ok` holds. */
async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 5000
  while (Date.now() < end) {
    if (await ok()) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`timed out waiting for ${what}`)
}
/** Replaces the file the way editors do: write aside, rename over. */
function edit(text: string): void {
  writeFileSync(file + '.tmp', text)
  renameSync(file + '.tmp', file)
}

t.test('an edit that loads swaps the policy; one that fails keeps the old one and shows in health', async (t) => {
  t.match(await check('drop_table'), { allowed: false, reason: 'drop_table is blocked' })
  const first = await fileStatus()
  t.match(first, { file, status: 'loaded', policies: ['watched'] })

  edit(doc('rm_rf'))
  await until('the edited policy to serve', async () => (await check('rm_rf')).allowed === false)
  t.equal((await check('drop_table')).allowed, true, 'the old rule is gone: the file was swapped as a whole')
  const loaded = await fileStatus()
  t.equal(loaded.status, 'loaded')
  t.ok(String(loaded.loadedAt) > String(first.loadedAt), 'loadedAt moves on')

  // a typo that used to allow everything: the previous policy must keep serving
  edit(doc('rm_rf').replace('defaults:', 'default:').replace('action: allow', 'action: deny'))
  await until('health to show the failed edit', async () => (await fileStatus()).status === 'failed')
  const failed = await fileStatus()
  t.match(
    failed.error,
    /unknown key 'default' in the rules document of yaml:.*rules\.yaml line 7 \(did you mean 'defaults'\?\)/
  )
  t.match(failed.failedAt, /^\d{4}-\d\d-\d\dT/)
  t.equal(failed.loadedAt, loaded.loadedAt, 'loadedAt still names the load that serves')
  t.same((await check('rm_rf')).allowed, false, 'the previous policy still denies')
  t.equal((await check('anything')).allowed, true)
  t.ok(
    tp.logs.some(
      (l) =>
        l.level === 50 && String(l.msg).includes('does not load') && String(l.error).includes("unknown key 'default'")
    ),
    'the failure is logged'
  )

  // deleting the file is a failed edit too
  rmSync(file)
  await until('health to show the missing file', async () =>
    /cannot read policy file/.test(String((await fileStatus()).error))
  )
  t.equal((await check('rm_rf')).allowed, false)

  edit(doc('shutdown'))
  await until('the fixed file to load', async () => (await fileStatus()).status === 'loaded')
  t.equal((await check('shutdown')).allowed, false)
  t.equal((await check('rm_rf')).allowed, true)
  t.notOk('error' in (await fileStatus()), 'the error clears once the file loads')
})
