import t from 'tap'
import fc from 'fast-check'
import { buildRulesPolicy } from '../../runtime/governance/rules-policy.js'
import { compareLoose, looseEquals } from '../../runtime/governance/rule-operators.js'
import { md } from '../helpers/governance.js'

const one = (op: string, value: unknown, action = 'deny') =>
  buildRulesPolicy(
    {
      name: 'p',
      rules: [{ name: 'r', condition: { field: 'f', operator: op, value }, action }],
      defaults: { action: 'allow' }
    },
    'code:prop'
  )
const hit = (op: string, value: unknown, actual: unknown): boolean =>
  one(op, value).evaluate(md(actual === undefined ? {} : { f: actual })).decision === 'deny'

const scalar = fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.string(), fc.boolean())
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 4 }))
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const opAndValue = fc.oneof(
  fc.tuple(fc.constantFrom('eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'contains'), value),
  fc.tuple(fc.constantFrom('in', 'not_in'), fc.array(scalar, { maxLength: 4 })),
  fc.tuple(fc.constant('matches'), fc.string().map(escape))
)

t.test('a missing or null field never matches, whatever the operator and value', async (t) => {
  fc.assert(fc.property(opAndValue, fc.constantFrom(undefined, null), ([op, v], missing) => !hit(op, v, missing)))
  t.pass()
})

t.test('ne is the negation of eq on a present field; not_in of in', async (t) => {
  fc.assert(fc.property(value, value, (a, b) => hit('eq', b, a) !== hit('ne', b, a)))
  fc.assert(
    fc.property(scalar, fc.array(scalar, { maxLength: 5 }), (a, list) => hit('in', list, a) !== hit('not_in', list, a))
  )
  t.pass()
})

t.test('eq is reflexive and numeric-aware across integer and float forms', async (t) => {
  fc.assert(fc.property(value, (a) => hit('eq', a, structuredClone(a))))
  fc.assert(fc.property(fc.integer(), (n) => hit('eq', n, Number(`${n}.0`)) && hit('eq', Number(`${n}.0`), n)))
  fc.assert(fc.property(fc.integer(), (n) => !hit('eq', n, String(n))))
  t.pass()
})

t.test('ordering operators agree with numeric order and with each other', async (t) => {
  const num = fc.double({ noNaN: true })
  fc.assert(
    fc.property(
      num,
      num,
      (a, b) =>
        hit('gt', b, a) === a > b &&
        hit('lt', b, a) === a < b &&
        hit('gte', b, a) === a >= b &&
        hit('lte', b, a) === a <= b
    )
  )
  fc.assert(fc.property(value, value, (a, b) => Math.sign(compareLoose(a, b)) === -Math.sign(compareLoose(b, a))))
  fc.assert(fc.property(value, value, (a, b) => hit('gte', b, a) === (hit('gt', b, a) || compareLoose(a, b) === 0)))
  t.pass()
})

t.test('in is membership under loose equality', async (t) => {
  fc.assert(
    fc.property(
      scalar,
      fc.array(scalar, { maxLength: 5 }),
      (a, list) => hit('in', list, a) === list.some((x) => looseEquals(a, x))
    )
  )
  fc.assert(
    fc.property(scalar, fc.array(scalar, { maxLength: 5 }), fc.nat(5), (a, list, at) => {
      const withA = [...list.slice(0, at), a, ...list.slice(at)]
      return hit('in', withA, a)
    })
  )
  t.pass()
})

t.test('contains is substring on strings and membership on lists', async (t) => {
  fc.assert(fc.property(fc.string(), fc.string(), (s, needle) => hit('contains', needle, s) === s.includes(needle)))
  fc.assert(
    fc.property(
      fc.array(fc.string(), { maxLength: 5 }),
      fc.string(),
      (list, needle) => hit('contains', needle, list) === list.includes(needle)
    )
  )
  t.pass()
})

t.test('matches is an unanchored search; (?i) matches case-insensitively', async (t) => {
  fc.assert(
    fc.property(fc.string(), fc.string(), (s, needle) => hit('matches', escape(needle), s) === s.includes(needle))
  )
  const ascii = fc.string({ unit: fc.constantFrom(...'abcXYZ 12-'.split('')) })
  fc.assert(
    fc.property(
      ascii,
      ascii,
      (s, needle) => hit('matches', '(?i)' + escape(needle), s) === s.toLowerCase().includes(needle.toLowerCase())
    )
  )
  t.pass()
})

t.test('priority sort is stable and the first match decides', async (t) => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 12 }), (prios) => {
      const p = buildRulesPolicy(
        {
          name: 'p',
          rules: prios.map((priority, i) => ({
            name: `r${i}`,
            condition: { field: 'f', operator: 'eq', value: 1 },
            action: 'deny',
            priority,
            message: String(i)
          }))
        },
        'code:prop'
      )
      const d = p.evaluate(md({ f: 1 }))
      const max = Math.max(...prios)
      return d.decision === 'deny' && d.reason === String(prios.indexOf(max))
    })
  )
  t.pass()
})
