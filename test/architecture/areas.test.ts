import t from 'tap'
import { startTestPlatform } from '../helpers/platform.js'
import { AreaKey, CORE, ExtensionPoint } from '../../runtime/contracts/index.js'
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

t.test('provide freezes the service: no area changes it after install', async (t) => {
  const COUNTER = new AreaKey<{ n: number }>('counter')
  const tp = await startTestPlatform(
    {},
    {
      install: (p) => {
        p.provide(COUNTER, { n: 1 })
      }
    }
  )
  t.teardown(tp.close)
  const service = tp.platform.area(COUNTER)
  t.ok(Object.isFrozen(service))
  t.throws(() => {
    service.n = 2
  }, TypeError)
  t.equal(service.n, 1)
})

t.test(
  'extension points: declared owner, declared dependency, one value when single, closed once listening',
  async (t) => {
    const NAMES = new ExtensionPoint<string>('owner', 'names')
    const ONE = new ExtensionPoint<number>('owner', 'one', true)
    const ANY = new ExtensionPoint<string>(CORE, 'any')
    const area = (name: string, dependsOn: string[], install: Area['install']): Area => ({ name, dependsOn, install })
    const tp = await startTestPlatform(
      {},
      {
        install: async (p) => {
          t.same(p.extensions(NAMES), [], 'empty before anything is added')
          await p.use(area('owner', [], (q) => q.extend(NAMES, 'own')))
          await p.use(
            area('friend', ['owner'], (q) => {
              q.extend(NAMES, 'friend')
              q.extend(ONE, 1)
              t.throws(() => q.extend(ONE, 2), {
                message: 'ExtensionPoint(owner.one) takes one value and has one already'
              })
            })
          )
          await t.rejects(p.use(area('stranger', [], (q) => q.extend(NAMES, 'stranger'))), {
            message: 'area "stranger" extends ExtensionPoint(owner.names) without declaring "owner" in dependsOn'
          })
          await p.use(area('anyone', [], (q) => q.extend(ANY, 'core points take any area')))
          p.extend(NAMES, 'root')
        }
      }
    )
    t.teardown(tp.close)
    t.same(tp.platform.extensions(NAMES), ['own', 'friend', 'root'], 'in the order added; the refused one is not')
    t.same(tp.platform.extensions(ONE), [1])
    t.same(tp.platform.extensions(ANY), ['core points take any area'])
    t.throws(() => tp.platform.extend(NAMES, 'late'), {
      message: 'ExtensionPoint(owner.names) is closed: extensions are added before the platform listens'
    })
    t.same(tp.platform.extensions(NAMES), ['own', 'friend', 'root'])
  }
)
