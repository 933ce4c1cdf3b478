import t from 'tap'
import { startTestPlatform } from '../helpers/platform.js'

t.test('close stops accepting, lets in-flight responses finish, then closes the store', async (t) => {
  let release!: () => void
  const gate = new Promise<void>((r) => {
    release = r
  })
  let started!: () => void
  const running = new Promise<void>((r) => {
    started = r
  })
  const tp = await startTestPlatform(
    {},
    {
      install: (p) => {
        p.http.get('/slow', async () => {
          started()
          await gate
          return { finished: true }
        })
      }
    }
  )
  const slow = fetch(tp.url + '/slow').then(async (r) => ({ status: r.status, body: await r.json() }))
  await running
  const closing = tp.close()
  // new connections are refused once the listen socket is closed
  await new Promise((r) => setTimeout(r, 20))
  const refused = await fetch(tp.url + '/healthz', { headers: { connection: 'close' } }).then(
    () => 'served',
    () => 'refused'
  )
  t.equal(refused, 'refused')
  t.equal(tp.platform.store.isOpen, true, 'store stays open while a response is in flight')
  release()
  t.same(await slow, { status: 200, body: { finished: true } })
  await closing
  t.equal(tp.platform.store.isOpen, false)
})
