// Kill switch and control audit after SIGKILL: an arm answered 200 stays armed after a restart and
// its audit entry is there, with more arms in flight when the kill lands; a disarm likewise.
import t from 'tap'
import { crashTrial } from './crash-server.js'

const ARM = `async (i, call) => {
  await call('POST', '/api/admin/governance/kill-switch/arm', { reason: 'incident ' + i, operator: 'label' })
  return 'incident ' + i
}`

t.test('an acknowledged arm survives SIGKILL: armed after restart, every arm audited', async (t) => {
  // the trials run side by side: each is a child process waiting on its own disk writes
  await Promise.all(
    [1, 1, 8].map(async (killAt, trial) => {
      const { acked, call } = await crashTrial(t, ARM, { killAt })
      const health = await call('GET', '/api/admin/governance/health')
      t.equal(health.body.killSwitch.armed, true, `trial ${trial}: armed after restart`)
      t.equal(health.body.killSwitch.principal, 'alice', `trial ${trial}: the principal who armed it is kept`)
      const audit = await call('GET', '/api/admin/audit?limit=1000')
      const audited = new Set(
        (audit.body as { action: string; message: string }[])
          .filter((e) => e.action === 'governance.kill_switch.arm')
          .map((e) => e.message)
      )
      t.same(
        acked.filter((r) => !audited.has(r as string)),
        [],
        `trial ${trial}: every acknowledged arm has its audit entry`
      )
    })
  )
})

// one writer, so the arm is answered before the first disarm starts
const DISARM = `async (i, call) => {
  if (i === 0) await call('POST', '/api/admin/governance/kill-switch/arm', { reason: 'incident' })
  else await call('POST', '/api/admin/governance/kill-switch/disarm')
  return i
}`

t.test('an acknowledged disarm survives SIGKILL: disarmed after restart', async (t) => {
  await Promise.all(
    [2, 2].map(async (killAt, trial) => {
      const { call } = await crashTrial(t, DISARM, { killAt, inFlight: 1 })
      const health = await call('GET', '/api/admin/governance/health')
      t.equal(health.body.killSwitch.armed, false, `trial ${trial}: disarmed after restart`)
    })
  )
})
