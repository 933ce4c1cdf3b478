// `npm run conformance`: serves the fixtures and runs the official suite (on the Node 22 of this
// folder's own package) for --requirements 2025-11-25, --requirements 2026-07-28 and every
// tasks-extension scenario. Exit 1 on any failed check. Needs `cd test/conformance && npm install`.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serve } from './serve.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const node22 = join(here, 'node_modules/.bin/node')
const cli = join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js')
if (!existsSync(node22) || !existsSync(cli)) {
  console.error('conformance suite missing: run `cd test/conformance && npm install` first')
  process.exit(2)
}
const TASKS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition'
]
const only = process.argv.slice(2)
const runs =
  only.length > 0
    ? only.map((s) => (s.startsWith('--') ? s.slice(2).split('=') : ['scenario', s]))
    : [['requirements', '2025-11-25'], ['requirements', '2026-07-28'], ...TASKS.map((s) => ['scenario', s])]

const server = await serve(0)
const out = mkdtempSync(join(tmpdir(), 'conformance-results-'))
let failed = 0
for (const [flag, value] of runs) {
  const args = [cli, 'server', '--url', server.url, `--${flag}`, value, '-o', out]
  console.log(`\n=== conformance server --${flag} ${value}`)
  const code = await new Promise((resolve) => {
    const p = spawn(node22, args, { stdio: 'inherit' })
    p.on('exit', (c) => resolve(c ?? 1))
  })
  if (code !== 0) failed++
}
await server.close()
console.log(`\nresults in ${out}; ${failed === 0 ? 'all runs passed' : `${failed} run(s) failed`}`)
process.exit(failed === 0 ? 0 : 1)
