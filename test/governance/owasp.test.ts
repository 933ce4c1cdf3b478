import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { OWASP_ROWS, owaspMatrix } from '../../runtime/governance/owasp.js'
import { COMPLIANCE } from '../../runtime/governance/compliance.js'

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..')

t.test('ids ASI01..ASI10 in order with the December 2025 titles', async (t) => {
  t.same(
    OWASP_ROWS.map((r) => `${r.id} ${r.title}`),
    [
      'ASI01 Agent Goal Hijack',
      'ASI02 Tool Misuse and Exploitation',
      'ASI03 Identity and Privilege Abuse',
      'ASI04 Agentic Supply Chain Vulnerabilities',
      'ASI05 Unexpected Code Execution',
      'ASI06 Memory and Context Poisoning',
      'ASI07 Insecure Inter-Agent Communication',
      'ASI08 Cascading Failures',
      'ASI09 Human-Agent Trust Exploitation',
      'ASI10 Rogue Agents'
    ]
  )
  const m = owaspMatrix() as { coverage_counts: Record<string, number>; total_rows: number }
  t.equal(
    Object.values(m.coverage_counts).reduce((a, b) => a + b, 0),
    10
  )
})

t.test('every evidence pointer exists: file, test, and the grep string inside the file', async (t) => {
  const rows = [...OWASP_ROWS, ...Object.values(COMPLIANCE).flat()]
  let n = 0
  for (const r of rows) {
    if (r.coverage === 'COVERED' || r.coverage === 'PARTIAL')
      t.ok(r.evidence.length > 0, `${r.id} claims ${r.coverage} with evidence`)
    for (const e of r.evidence) {
      n++
      const file = join(root, e.class)
      t.ok(existsSync(file), `${r.id}: ${e.class} exists`)
      if (existsSync(file))
        t.ok(readFileSync(file, 'utf8').includes(e.consumer_grep), `${r.id}: ${e.class} contains '${e.consumer_grep}'`)
      if (e.test !== null) t.ok(existsSync(join(root, e.test)), `${r.id}: ${e.test} exists`)
    }
  }
  t.ok(n > 20)
})

t.test('every compliance framework has five rows', async (t) => {
  t.same(Object.fromEntries(Object.entries(COMPLIANCE).map(([k, v]) => [k, v.length])), {
    EU_AI_ACT: 5,
    HIPAA: 5,
    SOC2: 5
  })
})
