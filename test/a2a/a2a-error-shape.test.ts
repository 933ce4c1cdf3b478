/** One body shape per endpoint: every error the A2A endpoint answers is a JSON-RPC error, never a REST body. */
import t from 'tap'
import { rpc, start } from './a2a-helpers.js'

const TOKEN = 'a2a-error-shape-token-0123'
const request = { jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'none' } }

t.test('refusals on the A2A endpoint are JSON-RPC errors, whatever refuses', async (t) => {
  const tp = await start({
    'platform.auth.tokens': [{ token: TOKEN, principal: 'alice', roles: [] }],
    'platform.ai.endpoint.auth': 'required'
  })
  t.teardown(tp.close)
  const bearer = { authorization: `Bearer ${TOKEN}` }

  const anonymous = await rpc(`${tp.url}/platform/agent/demo/a2a`, request)
  t.equal(anonymous.status, 401)
  t.match(anonymous.body, { jsonrpc: '2.0', error: { code: -32600, message: /requires an authenticated principal/ } })
  t.notOk('code' in anonymous.body && typeof anonymous.body.code === 'string', 'no REST code member')

  const unknownAgent = await rpc(`${tp.url}/platform/agent/nobody/a2a`, request, bearer)
  t.equal(unknownAgent.status, 404)
  t.match(unknownAgent.body, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: "Unknown agent '/platform/agent/nobody/a2a'" }
  })
  t.notOk(
    'error' in unknownAgent.body && typeof unknownAgent.body.error === 'string',
    'not the REST {error, code} body'
  )

  const anonymousUnknown = await rpc(`${tp.url}/platform/agent/nobody/a2a`, request)
  t.equal(anonymousUnknown.status, 401, 'the principal is checked before the agent, as before')
  t.equal(anonymousUnknown.body.jsonrpc, '2.0')
})

t.test('both 401s of the JSON-RPC endpoint have one shape: a JSON-RPC error with the challenge header', async (t) => {
  const tp = await start({ 'platform.ai.endpoint.auth': 'required' })
  t.teardown(tp.close)
  const shape = (b: Record<string, unknown>): unknown => {
    const e = b.error as { code: number; message: string; data: { reason: string }[] }
    return { keys: Object.keys(b).sort(), id: b.id, code: e.code, reason: e.data[0]?.reason }
  }
  const knownRes = await fetch(`${tp.url}/platform/agent/demo/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request)
  })
  const unknownRes = await fetch(`${tp.url}/platform/agent/nobody/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request)
  })
  t.equal(knownRes.status, 401)
  t.equal(unknownRes.status, 401)
  t.equal(knownRes.headers.get('www-authenticate'), 'Bearer')
  t.equal(unknownRes.headers.get('www-authenticate'), 'Bearer')
  const known = (await knownRes.json()) as Record<string, unknown>
  const unknown = (await unknownRes.json()) as Record<string, unknown>
  t.same(shape(known), { keys: ['error', 'id', 'jsonrpc'], id: null, code: -32600, reason: 'INVALID_REQUEST' })
  t.same(shape(unknown), shape(known), 'the same JSON-RPC shape for an agent that exists and one that does not')
})
