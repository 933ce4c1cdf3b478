// Generated inputs: manifest and eval-run parsing never throws anything but its own error and never
// accepts what breaks the rules; random bodies over HTTP get a 2xx or a 400 from the catalogue,
// never a 500, and nothing invalid is stored.
import t from 'tap'
import fc from 'fast-check'
import { parseManifest } from '../../runtime/workflows/workflow-manifest.js'
import { parseEvalRun } from '../../runtime/admin/eval-run.js'
import { ADMIN_ERRORS } from '../../runtime/admin/errors.js'
import { WORKFLOWS_ERRORS } from '../../runtime/workflows/errors.js'
import { isPlatformError } from '../../runtime/contracts/platform-error.js'
import { adminPlatform, call, ALICE, WRITER } from './helpers.js'

const ID = /^[A-Za-z0-9_-]+$/
const LABEL = /^[A-Za-z0-9_\-.:]+$/

// manifests close to valid, so the property reaches the graph rules and not only the first check
const nodeId = fc.oneof(fc.constantFrom('a', 'b', 'c'), fc.string({ maxLength: 4 }))
const manifest = fc.record(
  {
    id: fc.oneof(fc.constantFrom('w', 'flow-1'), fc.string({ maxLength: 6 }), fc.anything()),
    name: fc.oneof(fc.constant('Flow'), fc.string({ maxLength: 3 }), fc.anything()),
    version: fc.oneof(fc.integer({ min: -1, max: 3 }), fc.double(), fc.anything()),
    nodes: fc.oneof(
      fc.array(fc.record({ id: nodeId, type: fc.oneof(fc.constantFrom('agent', 'output', 'robot'), fc.anything()) }), {
        maxLength: 4
      }),
      fc.anything()
    ),
    edges: fc.oneof(fc.array(fc.record({ from: nodeId, to: nodeId }), { maxLength: 4 }), fc.anything())
  },
  { requiredKeys: [] }
)

t.test('parseManifest: a WORKFLOW_INVALID or a manifest that keeps every rule', async (t) => {
  fc.assert(
    fc.property(fc.oneof(manifest, fc.anything()), (body) => {
      let m
      try {
        m = parseManifest(body)
      } catch (err) {
        if (!isPlatformError(err, WORKFLOWS_ERRORS.WORKFLOW_INVALID)) throw err
        return
      }
      const ids = new Set(m.nodes.map((n) => n.id))
      if (!ID.test(m.id) || m.name.trim() === '' || !Number.isInteger(m.version) || m.version < 1)
        throw new Error('accepted a bad header: ' + JSON.stringify(m))
      if (ids.size !== m.nodes.length) throw new Error('accepted duplicate node ids')
      for (const n of m.nodes) if (!ID.test(n.id) || n.label === '') throw new Error('accepted a bad node')
      for (const e of m.edges)
        if (e.from === e.to || !ids.has(e.from) || !ids.has(e.to)) throw new Error('accepted a bad edge')
    }),
    { numRuns: 2000 }
  )
  t.pass('2000 generated manifests')
})

t.test('parseEvalRun: an EVAL_RUN_INVALID or a run with valid labels and types', async (t) => {
  const run = fc.record(
    {
      id: fc.oneof(fc.constantFrom('r1', 'a:b.c'), fc.string({ maxLength: 5 }), fc.anything()),
      baseline: fc.oneof(fc.constant('base'), fc.string({ maxLength: 5 }), fc.anything()),
      timestamp: fc.oneof(fc.constant('2026-01-01T00:00:00Z'), fc.string({ maxLength: 8 }), fc.anything()),
      verdict: fc.anything(),
      passed: fc.anything(),
      scores: fc.oneof(fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.double(), fc.anything())), fc.anything()),
      prompt: fc.anything()
    },
    { requiredKeys: [] }
  )
  fc.assert(
    fc.property(fc.oneof(run, fc.anything()), (body) => {
      let r
      try {
        r = parseEvalRun(body)
      } catch (err) {
        if (!isPlatformError(err, ADMIN_ERRORS.EVAL_RUN_INVALID)) throw err
        return
      }
      if (!LABEL.test(r.id) || !LABEL.test(r.baseline)) throw new Error('accepted a bad label')
      if (Number.isNaN(Date.parse(r.timestamp))) throw new Error('accepted a bad timestamp')
      if (typeof r.passed !== 'boolean' || typeof r.prompt !== 'string') throw new Error('accepted bad types')
      for (const v of Object.values(r.scores)) if (!Number.isFinite(v)) throw new Error('accepted a bad score')
    }),
    { numRuns: 2000 }
  )
  t.pass('2000 generated runs')
})

t.test('random bodies over HTTP: 2xx or a catalogue 400, never a 500', async (t) => {
  const tp = await adminPlatform({
    ...WRITER,
    'platform.admin.workflows.store': 'memory',
    'platform.admin.evals.store': 'memory'
  })
  t.teardown(tp.close)
  const paths = [
    '/workflow',
    '/evals/runs',
    '/broadcasters/broadcast',
    '/broadcasters/unicast',
    '/workflow/approvals/x'
  ]
  const samples = fc.sample(fc.oneof(manifest, fc.jsonValue()), { numRuns: 60, seed: 42 })
  for (const [i, body] of samples.entries()) {
    const path = paths[i % paths.length]!
    const r = await call(tp, 'POST', path, { token: ALICE, body })
    if (!((r.status >= 200 && r.status < 300) || r.status === 400 || r.status === 404 || r.status === 409))
      t.fail(`${path} ${JSON.stringify(body)} → ${r.status} ${r.text}`)
    if (r.status >= 400) t.match(r.body, { error: String, code: /^PLT_ERR_/ }, `${path}: a catalogue body`)
  }
  for (const w of (await call(tp, 'GET', '/workflow')).body) t.same(parseManifest(w).id, w.id, 'stored workflows parse')
})
