import t from 'tap'
import { TokenResolver, tokenOf, authorizerFromConfig, type Principal } from '../../runtime/auth/index.js'
import { DENY_ALL, ALLOW_ALL, REQUIRE_PRINCIPAL, roleBased } from '../../runtime/auth/authorizer.js'
import { RingBuffer } from '../../runtime/store/index.js'

const p = (name: string, roles: string[] = []): Principal => ({ name, roles, via: 'token' })

t.test('token extraction', async (t) => {
  t.equal(tokenOf({ authorization: 'Bearer abc' }), 'abc')
  t.equal(tokenOf({ authorization: 'BEARER   abc ' }), 'abc')
  t.equal(tokenOf({ 'x-platform-auth': 'xyz' }), 'xyz')
  t.equal(tokenOf({ authorization: 'Basic abc' }), undefined)
  t.equal(tokenOf({}), undefined)
})

t.test('resolver matches plain and hashed tokens, nothing else', async (t) => {
  const r = new TokenResolver([{ token: 'a'.repeat(20), principal: 'one', roles: ['r'] }])
  t.match(r.resolve({ authorization: `Bearer ${'a'.repeat(20)}` }), { name: 'one', roles: ['r'], via: 'token' })
  t.equal(r.resolve({ authorization: `Bearer ${'a'.repeat(19)}` }), null)
  t.equal(new TokenResolver([]).resolve({ authorization: 'Bearer x' }), null)
})

t.test('built-in authorizers', async (t) => {
  t.equal(DENY_ALL('a', 't', p('x')), false)
  t.equal(ALLOW_ALL('a', 't', null), true)
  t.equal(REQUIRE_PRINCIPAL('a', 't', null), false)
  t.equal(REQUIRE_PRINCIPAL('a', 't', p('  ')), false)
  t.equal(REQUIRE_PRINCIPAL('a', 't', p('x')), true)
  const rb = roleBased({ 'workflow.write': ['editor'], '*': ['admin'] })
  t.equal(rb('workflow.write', 't', p('x', ['editor'])), true)
  t.equal(rb('workflow.write', 't', p('x', ['admin'])), false)
  t.equal(rb('broadcast', 't', p('x', ['admin'])), true)
  t.equal(rb('broadcast', 't', null), false)
  t.equal(roleBased({})('anything', 't', p('x', ['admin'])), false, 'no rule means deny')
  t.equal(authorizerFromConfig(undefined, true, {}), REQUIRE_PRINCIPAL)
  t.equal(authorizerFromConfig(undefined, false, {}), DENY_ALL)
  t.equal(authorizerFromConfig('allow-all', false, {}), ALLOW_ALL)
})

t.test('ring buffer keeps the newest entries in order', async (t) => {
  const rb = new RingBuffer<number>(3)
  for (let i = 1; i <= 5; i++) rb.push(i)
  t.same(rb.last(), [3, 4, 5])
  t.same(rb.last(2), [4, 5])
  t.same(rb.newest(2), [5, 4])
  t.equal(rb.size, 3)
  // what a log keeps beside the ring sits where push put its item, found again by position(i)
  const beside: number[] = []
  const ring = new RingBuffer<number>(3)
  for (let i = 1; i <= 7; i++) beside[ring.push(i)] = i * 10
  t.same(
    [0, 1, 2].map((i) => beside[ring.position(i)]),
    ring.last().map((v) => v * 10)
  )
  t.throws(() => new RingBuffer(0))
})
