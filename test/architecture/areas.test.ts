import t from 'tap'
import { startTestPlatform } from '../helpers/platform.js'
import { AreaKey } from '../../runtime/contracts/index.js'
import type { Area } from '../../runtime/platform.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import { GOVERNANCE } from '../../runtime/governance/index.js'

t.test('use() refuses an area whose dependency is not installed yet, and changes nothing', async (t) => {
  await t.rejects(startTestPlatform({}, { install: (p) => p.use(governanceArea) }), {
    message: 'area "governance" depends on "scope", which is not installed'
  })
  const tp = await startTestPlatform(
    {},
    {
      install: async (p) => {
        await t.rejects(p.use(governanceArea), {
          message: 'area "governance" depends on "scope", which is not installed'
        })
        t.same(p.areaNames, [], 'the refused area is not recorded')
        await p.use(scopeArea)
        await p.use(governanceArea)
      }
    }
  )
  t.teardown(tp.close)
  t.same(tp.platform.areaNames, ['scope', 'governance'])
  t.ok(tp.platform.hasArea(GOVERNANCE))
})

t.test('use() refuses an area installed twice', async (t) => {
  const tp = await startTestPlatform({}, { install: (p) => p.use(scopeArea) })
  t.teardown(tp.close)
  await t.rejects(tp.platform.use(scopeArea), { message: 'area "scope" is installed twice' })
  t.same(tp.platform.areaNames, ['scope'])
})

t.test('area keys: provide once, area() throws with the name when missing, hasArea tells', async (t) => {
  const COUNTER = new AreaKey<{ n: number }>('counter')
  const counterArea: Area = {
    name: 'counter',
    dependsOn: [],
    install: (p) => {
      p.provide(COUNTER, { n: 1 })
    }
  }
  const tp = await startTestPlatform()
  t.teardown(tp.close)
  t.notOk(tp.platform.hasArea(COUNTER))
  t.throws(() => tp.platform.area(COUNTER), { message: 'area "counter" is not installed' })
  await tp.platform.use(counterArea)
  t.equal(tp.platform.area(COUNTER).n, 1)
  t.throws(
    () => {
      tp.platform.provide(COUNTER, { n: 2 })
    },
    { message: 'area "counter" is provided twice' }
  )
  t.equal(tp.platform.area(COUNTER).n, 1, 'the first value stays')
  t.equal(String(COUNTER), 'AreaKey(counter)')
})
