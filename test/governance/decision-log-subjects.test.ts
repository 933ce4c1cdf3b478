import t from 'tap'
import { GovernanceDecisionLog, MAX_SUBJECTS, PER_SUBJECT } from '../../runtime/governance/decision-log.js'
import type { DecisionEntry } from '../../runtime/contracts/index.js'

const entry = (decision: DecisionEntry['decision'], snapshot: Record<string, unknown>, reason = ''): DecisionEntry => ({
  timestamp: new Date().toISOString(),
  policy_name: 'p',
  policy_source: 'code:p',
  policy_version: '1',
  decision,
  reason,
  evaluation_ms: 0,
  context_snapshot: { phase: 'pre_admission', message: 'm', ...snapshot }
})

t.test('the subject index keeps deny and prefer only, newest first, bounded per subject', async (t) => {
  const log = new GovernanceDecisionLog(10)
  for (let i = 0; i < PER_SUBJECT + 6; i++) log.record(entry('deny', { conversation_id: 'c' }, `r${i}`))
  log.record(entry('admit', { conversation_id: 'c' }))
  log.record(entry('error', { conversation_id: 'c' }))
  const got = log.forSubject({ conversationId: 'c' }, ['deny', 'prefer'], 1000)
  t.equal(got.length, PER_SUBJECT, 'bounded per subject')
  t.equal(got[0]!.reason, `r${PER_SUBJECT + 5}`, 'newest first')
  t.equal(got.at(-1)!.reason, 'r6', 'the oldest went')
  t.equal(log.forSubject({ conversationId: 'c' }, ['admit', 'error']).length, 0, 'admits and errors are not indexed')
  // the ring holds 10 entries; the index does not depend on it
  t.equal(log.size, 10)
  log.record(entry('prefer', { conversation_id: 'c' }, 'p'))
  t.same(
    log.forSubject({ conversationId: 'c' }, ['prefer']).map((e) => e.reason),
    ['p']
  )
})

t.test('the least recently recorded subjects are dropped beyond the bound', async (t) => {
  const log = new GovernanceDecisionLog(10)
  log.record(entry('deny', { user_id: 'first' }))
  log.record(entry('deny', { user_id: 'kept' }))
  for (let i = 0; i < MAX_SUBJECTS - 2; i++) log.record(entry('deny', { user_id: `u${i}` }))
  // recording again moves 'kept' to the newest end
  log.record(entry('deny', { user_id: 'kept' }))
  log.record(entry('deny', { user_id: 'one-more' }))
  log.record(entry('deny', { user_id: 'two-more' }))
  t.equal(log.forSubject({ userId: 'first' }).length, 0, 'the oldest subject went')
  t.equal(log.forSubject({ userId: 'u0' }).length, 0, 'then the next least recently recorded')
  t.equal(log.forSubject({ userId: 'kept' }).length, 2, 'a subject recorded again stays')
  t.equal(log.forSubject({ userId: 'two-more' }).length, 1)
  t.equal(log.forSubject({ userId: 'u1' }).length, 1)
})
