import t from 'tap'
import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SignJWT, generateKeyPair, exportJWK, exportSPKI, base64url } from 'jose'
import { definePlugin, tool } from 'uws-agent-platform/sdk'
import { startExtras, wsClient } from './extras-helpers.js'
import { modern, openSession, manifestOf, ACCEPT_BOTH } from './helpers.js'
import { MCP_TOKEN_VALIDATORS } from '../../runtime/mcp/key.js'
import { loadConfig } from '../../runtime/areas.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'

const RESOURCE = 'https://mcp.example.com'
const AS = 'https://auth.example.com'
const META_URL = `${RESOURCE}/.well-known/oauth-protected-resource`

const rsa = await generateKeyPair('RS256')
const other = await generateKeyPair('RS256')
const ec = await generateKeyPair('ES256')
const rsaJwk = { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256' }

async function token(
  claims: Record<string, unknown> = {},
  opts: { key?: CryptoKey; alg?: string; kid?: string; exp?: number | string; aud?: string | string[] } = {}
): Promise<string> {
  const j = new SignJWT({ scope: 'mcp:tools mcp:read', ...claims })
    .setProtectedHeader({ alg: opts.alg ?? 'RS256', kid: opts.kid ?? 'rsa-1' })
    .setSubject('alice')
    .setIssuer(AS)
    .setAudience(opts.aud ?? RESOURCE)
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? '5m')
  return await j.sign(opts.key ?? rsa.privateKey)
}

const bearer = (tok: string) => ({ authorization: `Bearer ${tok}` })

t.test('OAuth resource server with the built-in JWT validator', async (t) => {
  const m = await startExtras({
    'org.platform.mcp.auth.resource': RESOURCE,
    'org.platform.mcp.auth.authorizationServers': [AS],
    'org.platform.mcp.auth.scopes': 'mcp:tools mcp:read',
    'org.platform.auth.jwt.issuer': AS,
    'org.platform.auth.jwt.keys': [rsaJwk]
  })
  t.teardown(m.tp.close)
  m.mcp.registerTool({ name: 'whoami', description: 'The caller', handler: (_a, ctx) => ctx.principal ?? 'nobody' })
  m.tp.platform.http.get('/test/principal', (ctx) => ({ principal: m.tp.platform.principals.resolve(ctx) }))

  await t.test('RFC 9728 metadata', async (t) => {
    const res = await fetch(`${m.base}/.well-known/oauth-protected-resource`)
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), /application\/json/)
    t.same(await res.json(), {
      resource: RESOURCE,
      authorization_servers: [AS],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp:tools', 'mcp:read']
    })
  })

  await t.test('no token: 401, the challenge and the JSON-RPC body, on POST, GET and DELETE', async (t) => {
    const res = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } }
      })
    })
    t.equal(res.status, 401)
    t.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${META_URL}", scope="mcp:tools mcp:read"`)
    t.equal(await res.text(), '{"jsonrpc":"2.0","error":{"code":-32001,"message":"Unauthorized"}}')
    t.equal(res.headers.get('mcp-session-id'), null, 'no session was created')
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(m.url, { method, headers: { 'mcp-session-id': 'x', accept: 'text/event-stream' } })
      t.equal(r.status, 401, method)
      t.match(r.headers.get('www-authenticate'), /^Bearer resource_metadata=/)
    }
    const agent = await fetch(`${m.base}/platform/agent/nobody/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}'
    })
    t.not(agent.status, 200)
  })

  await t.test('a valid token passes in both dialects; the JWT subject is the principal', async (t) => {
    const tok = await token()
    const r = await modern(m.url, 'tools/call', { name: 'whoami', arguments: {} }, { headers: bearer(tok) })
    t.equal(r.status, 200)
    t.equal(r.body.result.content[0].text, 'alice')
    const init = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...bearer(tok) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } }
      })
    })
    t.equal(init.status, 200)
    t.ok(init.headers.get('mcp-session-id'))
    const p = (await (await fetch(`${m.base}/test/principal`, { headers: bearer(tok) })).json()) as any
    t.same(
      p.principal,
      { name: 'alice', roles: [], via: 'jwt' },
      'principals.resolve (the write gate) sees the JWT principal'
    )
  })

  await t.test('refused tokens: 401 invalid_token, nothing runs', async (t) => {
    const now = Math.floor(Date.now() / 1000)
    const good = await token()
    const [h, p, s] = good.split('.') as [string, string, string]
    const forged = JSON.parse(Buffer.from(base64url.decode(p)).toString()) as Record<string, unknown>
    forged.sub = 'mallory'
    const cases: [string, string][] = [
      ['expired', await token({}, { exp: now - 3600 })],
      ['wrong audience', await token({}, { aud: 'https://other.example.com' })],
      [
        'wrong issuer',
        await new SignJWT({ scope: 'mcp:tools mcp:read' })
          .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
          .setSubject('alice')
          .setIssuer('https://evil.example.com')
          .setAudience(RESOURCE)
          .setExpirationTime('5m')
          .sign(rsa.privateKey)
      ],
      ['tampered payload', `${h}.${base64url.encode(JSON.stringify(forged))}.${s}`],
      ['tampered signature', `${h}.${p}.${s.slice(0, -4)}${s.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`],
      ['signed by another key', await token({}, { key: other.privateKey })],
      ['alg none', `${base64url.encode(JSON.stringify({ alg: 'none' }))}.${p}.`],
      [
        'HS256 with the public key as secret',
        `${base64url.encode(JSON.stringify({ alg: 'HS256', kid: 'rsa-1' }))}.${p}.${s}`
      ],
      [
        'no exp',
        await new SignJWT({ scope: 'mcp:tools mcp:read' })
          .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
          .setSubject('alice')
          .setIssuer(AS)
          .setAudience(RESOURCE)
          .sign(rsa.privateKey)
      ],
      ['not a JWT', 'hello']
    ]
    for (const [what, tok] of cases) {
      const r = await modern(m.url, 'tools/call', { name: 'whoami', arguments: {} }, { headers: bearer(tok) })
      t.equal(r.status, 401, what)
      t.equal(
        r.res.headers.get('www-authenticate'),
        `Bearer resource_metadata="${META_URL}", scope="mcp:tools mcp:read", error="invalid_token"`,
        what
      )
      t.same(r.body, { jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized' } }, what)
    }
    const p2 = (await (await fetch(`${m.base}/test/principal`, { headers: bearer(cases[3]![1]) })).json()) as any
    t.equal(p2.principal, null, 'a forged token is no principal for the write gate either')
  })

  await t.test('missing scope: 403 insufficient_scope', async (t) => {
    const r = await modern(m.url, 'tools/list', {}, { headers: bearer(await token({ scope: 'mcp:read' })) })
    t.equal(r.status, 403)
    t.equal(
      r.res.headers.get('www-authenticate'),
      `Bearer error="insufficient_scope", scope="mcp:tools mcp:read", resource_metadata="${META_URL}"`
    )
    t.equal(r.body.error.code, -32001)
    const scp = await modern(
      m.url,
      'tools/list',
      {},
      { headers: bearer(await token({ scope: undefined, scp: ['mcp:tools', 'mcp:read'] })) }
    )
    t.equal(scp.status, 200, 'scp as an array also counts')
  })

  await t.test('WebSocket: the upgrade token is checked on every message', async (t) => {
    const anon = await wsClient(m.url)
    const denied = await anon.rpc({
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {}
        }
      }
    })
    t.same(denied.error, { code: -32001, message: 'Unauthorized' })
    anon.ws.close()
    const ok = await wsClient(m.url, bearer(await token()))
    const res = await ok.rpc({
      id: 2,
      method: 'tools/call',
      params: {
        name: 'whoami',
        arguments: {},
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {}
        }
      }
    })
    t.equal(res.result.content[0].text, 'alice')
    ok.ws.close()
  })
})

t.test('resource with a path: metadata at the RFC 9728 §3.1 location too; JWKS file with an EC key', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jwks-'))
  const file = join(dir, 'jwks.json')
  writeFileSync(file, JSON.stringify({ keys: [{ ...(await exportJWK(ec.publicKey)), kid: 'ec-1' }] }))
  const m = await startExtras({
    'org.platform.mcp.auth.resource': 'https://mcp.example.com/platform/mcp',
    'org.platform.mcp.auth.authorizationServers': AS,
    'org.platform.auth.jwt.jwksFile': file
  })
  t.teardown(m.tp.close)
  for (const p of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/platform/mcp']) {
    const doc = (await (await fetch(m.base + p)).json()) as any
    t.same(
      doc,
      {
        resource: 'https://mcp.example.com/platform/mcp',
        authorization_servers: [AS],
        bearer_methods_supported: ['header']
      },
      `${p}; no scopes_supported when none are configured`
    )
  }
  const none = await modern(m.url, 'tools/list')
  t.equal(
    none.res.headers.get('www-authenticate'),
    'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/platform/mcp"'
  )
  const ok = await modern(
    m.url,
    'tools/list',
    {},
    {
      headers: bearer(
        await token({}, { key: ec.privateKey, alg: 'ES256', kid: 'ec-1', aud: 'https://mcp.example.com/platform/mcp' })
      )
    }
  )
  t.equal(ok.status, 200, 'ES256 from the JWKS file; audience defaults to the resource')
})

t.test('validators contributed in code and by plugins', async (t) => {
  await t.test('registered in code', async (t) => {
    const m = await startExtras(
      {
        'org.platform.mcp.auth.resource': RESOURCE,
        'org.platform.mcp.auth.authorizationServers': [AS],
        'org.platform.auth.tokenValidator': 'opaque'
      },
      (p) => {
        p.extend(MCP_TOKEN_VALIDATORS, {
          name: 'opaque',
          validate: async (tok) => (tok === 'open-sesame-token' ? { subject: 'bob', scopes: [] } : null)
        })
      }
    )
    t.teardown(m.tp.close)
    t.equal((await modern(m.url, 'tools/list', {}, { headers: bearer('open-sesame-token') })).status, 200)
    t.equal((await modern(m.url, 'tools/list', {}, { headers: bearer('wrong') })).status, 401)
  })
  await t.test('a plugin tool named <plugin>/<tool>', async (t) => {
    const m = await startExtras(
      {
        'org.platform.mcp.auth.resource': RESOURCE,
        'org.platform.mcp.auth.authorizationServers': [AS],
        'org.platform.mcp.auth.scopes': 'read',
        'org.platform.auth.tokenValidator': 'authz/check'
      },
      (p) => {
        const def = definePlugin({
          tools: [
            tool({
              name: 'check',
              description: 'validates',
              run: (a: { token: string }) =>
                a.token.startsWith('good-')
                  ? { sub: a.token.slice(5), scope: a.token.includes('-ro-') ? 'none' : 'read' }
                  : null
            })
          ]
        })
        p.plugins.set('/authz', manifestOf('authz'), inlineInstance(def, { log: p.logger }))
      }
    )
    t.teardown(m.tp.close)
    const s = await openSession(m.url).catch(() => undefined)
    t.equal(s, undefined, 'no session without a token')
    const r = await modern(m.url, 'tools/list', {}, { headers: bearer('good-alice') })
    t.equal(r.status, 200)
    t.equal(
      (await modern(m.url, 'tools/list', {}, { headers: bearer('good-ro-dave') })).status,
      403,
      'scopes enforced for plugin validators'
    )
    t.equal((await modern(m.url, 'tools/list', {}, { headers: bearer('bad') })).status, 401)
  })
})

t.test('bad configuration stops start-up with a message naming the key', async (t) => {
  await t.rejects(
    startExtras({ 'org.platform.mcp.auth.resource': RESOURCE, 'org.platform.mcp.auth.authorizationServers': [AS] }),
    /org\.platform\.auth\.jwt\.keys/
  )
  await t.rejects(
    startExtras({ 'org.platform.mcp.auth.resource': RESOURCE, 'org.platform.auth.jwt.keys': [rsaJwk] }),
    /authorizationServers/
  )
  await t.rejects(
    startExtras({
      'org.platform.mcp.auth.resource': 'not a url',
      'org.platform.mcp.auth.authorizationServers': [AS],
      'org.platform.auth.jwt.keys': [rsaJwk]
    }),
    /must be a URL/
  )
  await t.rejects(
    startExtras({
      'org.platform.mcp.auth.resource': RESOURCE,
      'org.platform.mcp.auth.authorizationServers': [AS],
      'org.platform.auth.tokenValidator': 'nope'
    }),
    /tokenValidator 'nope'/
  )
  await t.rejects(
    startExtras({ 'org.platform.auth.jwt.keys': ['-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----'] }),
    /JWT key #1/
  )
})

t.test('org.platform.* keys from YAML (nested or dotted) and ORG_PLATFORM_* environment', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cfg-'))
  writeFileSync(
    join(dir, 'platform.yaml'),
    `org:\n  platform:\n    mcp:\n      auth:\n        resource: ${RESOURCE}\n        scopes: a b\norg.platform.auth.tokenValidator: jwt\n`
  )
  const c = loadConfig({
    cwd: dir,
    env: {
      ORG_PLATFORM_MCP_AUTH_AUTHORIZATIONSERVERS: `${AS},https://as2.example.com`,
      ORG_PLATFORM_AUTH_JWT_KEYS: JSON.stringify([await exportSPKI(rsa.publicKey)])
    }
  })
  t.equal(c.get('org.platform.mcp.auth.resource'), RESOURCE)
  t.equal(c.get('org.platform.mcp.auth.scopes'), 'a b')
  t.equal(c.get('org.platform.auth.tokenValidator'), 'jwt')
  t.equal(c.get('org.platform.mcp.auth.authorizationServers'), `${AS},https://as2.example.com`)
  t.match(c.get('org.platform.auth.jwt.keys')[0], /BEGIN PUBLIC KEY/)
  t.throws(() => loadConfig({ cwd: dir, env: { ORG_PLATFORM_MCP_AUTH_NOPE: 'x' } }), /ORG_PLATFORM_MCP_AUTH_NOPE/)
})

t.test('JWT principals without MCP authorization: PEM key, HS256 when allowed', async (t) => {
  const secret = 'a-shared-secret-of-at-least-32-bytes!!'
  const m = await startExtras({
    'org.platform.auth.jwt.keys': [
      await exportSPKI(rsa.publicKey),
      { kty: 'oct', k: Buffer.from(secret).toString('base64url') }
    ],
    'org.platform.auth.jwt.algorithms': ['RS256', 'HS256'],
    'org.platform.auth.jwt.audience': 'admin'
  })
  t.teardown(m.tp.close)
  m.tp.platform.http.get('/test/principal', (ctx) => ({ principal: m.tp.platform.principals.resolve(ctx) }))
  const who = async (tok: string) =>
    ((await (await fetch(`${m.base}/test/principal`, { headers: bearer(tok) })).json()) as any).principal
  t.same(await who(await token({ roles: ['operator'] }, { aud: 'admin', kid: 'whatever' })), {
    name: 'alice',
    roles: ['operator'],
    via: 'jwt'
  })
  const hs = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('svc')
    .setAudience('admin')
    .setExpirationTime('1m')
    .sign(Buffer.from(secret))
  t.equal((await who(hs)).name, 'svc')
  t.equal(await who(await token({}, { aud: RESOURCE })), null, 'wrong audience')
  t.equal(
    (await modern(m.url, 'tools/list')).status,
    200,
    'MCP stays open when org.platform.mcp.auth.resource is unset'
  )
})

t.test(
  'WebSocket principals come from every credential the HTTP path accepts: JWT, configured token, none',
  async (t) => {
    const secret = 'a-shared-secret-of-at-least-32-bytes!!'
    const m = await startExtras({
      'org.platform.auth.jwt.keys': [rsaJwk, { kty: 'oct', k: Buffer.from(secret).toString('base64url') }],
      'org.platform.auth.jwt.algorithms': ['RS256', 'HS256'],
      'org.platform.auth.jwt.audience': 'admin',
      'platform.auth.tokens': [{ token: 'static-token-0123456789', principal: 'bob' }]
    })
    t.teardown(m.tp.close)
    m.mcp.registerTool({ name: 'whoami', description: 'The caller', handler: (_a, ctx) => ctx.principal ?? 'nobody' })
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {}
    }
    const whoOverWs = async (headers: Record<string, string>): Promise<string> => {
      const c = await wsClient(m.url, headers)
      t.teardown(() => {
        c.ws.close()
      })
      const r = await c.rpc({ id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {}, _meta: meta } })
      return r.result.content[0].text
    }
    const hs = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('svc')
      .setAudience('admin')
      .setExpirationTime('1m')
      .sign(Buffer.from(secret))
    t.equal(await whoOverWs(bearer(hs)), 'svc', 'an HS256 JWT')
    t.equal(await whoOverWs(bearer(await token({}, { aud: 'admin' }))), 'alice', 'an RS256 JWT')
    t.equal(await whoOverWs(bearer('static-token-0123456789')), 'bob', 'a configured token')
    t.equal(
      await whoOverWs({ 'x-platform-auth': 'static-token-0123456789' }),
      'bob',
      'a configured token in X-Platform-Auth'
    )
    t.equal(
      await whoOverWs(bearer(await token({}, { aud: RESOURCE }))),
      'nobody',
      'a JWT for another audience is no principal'
    )
    t.equal(await whoOverWs({}), 'nobody', 'no credential')
    // the HTTP path agrees
    const r = await modern(m.url, 'tools/call', { name: 'whoami', arguments: {} }, { headers: bearer(hs) })
    t.equal(r.body.result.content[0].text, 'svc')
  }
)

t.test('WebSocket: a JWT that expires mid-connection stops naming a principal', async (t) => {
  const secret = 'a-shared-secret-of-at-least-32-bytes!!'
  const m = await startExtras({
    'org.platform.auth.jwt.keys': [{ kty: 'oct', k: Buffer.from(secret).toString('base64url') }],
    'org.platform.auth.jwt.algorithms': ['HS256'],
    'org.platform.auth.jwt.audience': 'admin',
    'org.platform.auth.jwt.clockToleranceSeconds': 0
  })
  t.teardown(m.tp.close)
  m.mcp.registerTool({ name: 'whoami', description: 'The caller', handler: (_a, ctx) => ctx.principal ?? 'nobody' })
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {}
  }
  const exp = Math.floor(Date.now() / 1000) + 2
  const short = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('svc')
    .setAudience('admin')
    .setExpirationTime(exp)
    .sign(Buffer.from(secret))
  const c = await wsClient(m.url, bearer(short))
  t.teardown(() => {
    c.ws.close()
  })
  const who = async (id: number): Promise<string> =>
    (await c.rpc({ id, method: 'tools/call', params: { name: 'whoami', arguments: {}, _meta: meta } })).result
      .content[0].text
  t.equal(await who(1), 'svc')
  await new Promise((resolve) => setTimeout(resolve, exp * 1000 - Date.now() + 1100))
  t.equal(await who(2), 'nobody', 'the same socket, after exp')
})
