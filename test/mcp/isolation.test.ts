import t from 'tap'
import { definePlugin, tool, agent } from 'uws-agent-platform/sdk'
import { startMcp, openSession, modern, modernHeaders, meta, manifestOf, ACCEPT_BOTH } from './helpers.js'
import { inlineInstance } from '../../runtime/plugins/inline.js'

t.test('responses always go to their own request, whatever the JSON-RPC ids', async (t) => {
  const m = await startMcp()
  t.teardown(m.tp.close)
  const sessions = await Promise.all([openSession(m.url), openSession(m.url)])
  const calls = Array.from({ length: 60 }, async (_, i) => {
    const name = `caller-${i}`
    if (i % 3 === 0) {
      const r = await modern(m.url, 'tools/call', { name: 'greet', arguments: { name } })
      return [name, r.body.result.content[0].text]
    }
    const s = sessions[i % 2]!
    // every request uses id 1: correlation must be per request, never per id (CVE-2026-25536)
    const res = await fetch(m.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-session-id': s.sid },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'greet', arguments: { name } }
      })
    })
    const body = await res.json()
    return [name, body.result.content[0].text]
  })
  for (const [name, text] of await Promise.all(calls)) t.equal(text, `Hello, ${name}!`)
})

t.test('notifications/cancelled aborts the request it names', async (t) => {
  const m = await startMcp()
  t.teardown(m.tp.close)
  const s = await openSession(m.url)
  const started = Date.now()
  const pending = s.call('tools/call', { name: 'slow_compute', arguments: { seconds: 20 } })
  await new Promise((resolve) => setTimeout(resolve, 100))
  const ack = await fetch(m.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'mcp-session-id': s.sid },
    body: JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 8, reason: 'changed my mind' }
    })
  })
  t.equal(ack.status, 202)
  void started
  const inflight = [...m.mcp.core.sessions.get(s.sid)!.inflight.keys()]
  t.equal(inflight.length, 1, 'one call in flight')
  await fetch(m.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'mcp-session-id': s.sid },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: inflight[0] } })
  })
  const r = await pending
  t.equal(r.body.result.isError, true, 'the aborted tool ends with its cancellation error')
})

t.test('plugins changing: agents appear and disappear, listen streams hear about it', async (t) => {
  const m = await startMcp({}, { fixtures: false })
  t.teardown(m.tp.close)
  const agentUrl = `${m.base}/platform/agent/late/mcp`
  const probe = async (): Promise<number> => (await modern(agentUrl, 'tools/list')).status
  t.equal(await probe(), 404, 'no agent yet')
  const ac = new AbortController()
  const res = await fetch(m.url, {
    method: 'POST',
    signal: ac.signal,
    headers: modernHeaders('subscriptions/listen'),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'L',
      method: 'subscriptions/listen',
      params: { _meta: meta(), notifications: { toolsListChanged: true } }
    })
  })
  const reader = res.body!.getReader()
  let buf = ''
  while (!buf.includes('acknowledged')) buf += new TextDecoder().decode((await reader.read()).value)
  const def = definePlugin({
    tools: [tool({ name: 'p_tool', description: 'from a plugin', run: () => 'p' })],
    agents: [agent({ name: 'late', tools: [tool({ name: 'a_tool', description: 'agent tool', run: () => 'a' })] })]
  })
  m.tp.platform.plugins.set('/late', manifestOf('late'), inlineInstance(def, { log: m.tp.platform.logger }))
  while (!buf.includes('tools/list_changed')) buf += new TextDecoder().decode((await reader.read()).value)
  t.pass('PluginsChanged → notifications/tools/list_changed')
  t.equal(await probe(), 200, 'the agent endpoint is live')
  t.same(
    (await modern(agentUrl, 'tools/list')).body.result.tools.map((x: any) => x.name),
    ['a_tool']
  )
  t.ok((await modern(m.url, 'tools/list')).body.result.tools.find((x: any) => x.name === 'p_tool'))
  const custom = definePlugin({
    agents: [
      agent({
        name: 'later',
        endpoint: '/later/mcp',
        tools: [tool({ name: 'c_tool', description: 'custom path tool', run: () => 'c' })]
      })
    ]
  })
  m.tp.platform.plugins.set('/later', manifestOf('later'), inlineInstance(custom, { log: m.tp.platform.logger }))
  t.same(
    (await modern(`${m.base}/later/mcp`, 'tools/list')).body.result.tools.map((x: any) => x.name),
    ['c_tool'],
    'a custom /mcp endpoint mounted after start-up'
  )
  m.tp.platform.plugins.remove('later')
  t.equal((await modern(`${m.base}/later/mcp`, 'tools/list')).status, 404, 'and answers 404 once its agent is gone')
  m.tp.platform.plugins.remove('late')
  t.equal(await probe(), 404, 'gone with its plugin')
  ac.abort()
})
