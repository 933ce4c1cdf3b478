// A2A 0.3 beside 1.0, through the official 0.3 client (@a2a-js/sdk 0.3, installed as a2a-sdk-03)
// unchanged: its card, send, stream, get, cancel and resubscribe; a 0.3 task read through 1.0 and back.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { A2AClient } from 'a2a-sdk-03/client'
import type { MessageSendParams } from 'a2a-sdk-03'
import { TaskState } from '@a2a-js/sdk'
import { A2A } from '../../runtime/a2a/key.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { start, clientFor, textOf, rpc } from './a2a-helpers.js'

const ask = (text: string, blocking?: boolean): MessageSendParams => ({
  message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] },
  ...(blocking !== undefined ? { configuration: { blocking } } : {})
})

const lastUser = (body: any): string => String(body.messages.filter((m: any) => m.role === 'user').at(-1)?.content)

t.test('the 0.3 client against the same agent and tasks', async (t) => {
  const fake = await new OpenAiServer().start()
  t.teardown(() => fake.close())
  // 'slowly' asks for 100 words one every 50 ms, so a task stays WORKING while the test acts on it
  fake.chat = (body) =>
    lastUser(body).includes('slowly')
      ? { stream: sseEvents(Array.from({ length: 100 }, (_, i) => deltaChunk({ content: `w${i} ` }))), intervalMs: 50 }
      : { stream: sseEvents([deltaChunk({ content: 'Hello ' }), deltaChunk({ content: 'there' })]) }
  const tp = await start({
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': fake.url,
    'platform.ai.openai.model': 'test-model'
  })
  t.teardown(tp.close)
  const agentPath = `${tp.url}/platform/agent/demo`
  const client = await A2AClient.fromCardUrl(`${agentPath}/.well-known/agent.json`)

  t.test('the 0.3 card at agent.json names the endpoint; agent-card.json stays 1.0', async (t) => {
    for (const path of [`${agentPath}/.well-known/agent.json`, `${agentPath}/a2a/.well-known/agent.json`]) {
      const res = await fetch(path)
      t.equal(res.status, 200, path)
      t.match(await res.json(), {
        protocolVersion: '0.3.0',
        name: 'demo',
        url: `${agentPath}/a2a`,
        preferredTransport: 'JSONRPC',
        capabilities: { streaming: true, pushNotifications: false },
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        skills: [{ id: 'demo' }]
      })
    }
    const v10 = await (await fetch(`${agentPath}/.well-known/agent-card.json`)).json()
    t.equal(v10.url, undefined)
    t.match(v10.supportedInterfaces, [{ protocolVersion: '1.0' }])
    t.equal(
      (await fetch(`${tp.url}/.well-known/agent.json`)).status,
      404,
      'no root card while several agents are served'
    )
    const named = await start({ 'platform.a2a.root-agent': 'demo' })
    t.teardown(named.close)
    t.match(await (await fetch(`${named.url}/.well-known/agent.json`)).json(), {
      name: 'demo',
      url: `${named.url}/platform/agent/demo/a2a`
    })
  })

  t.test('message/send answers the task in 0.3 shapes; tasks/get reads it', async (t) => {
    const sent: any = await client.sendMessage(ask('hi'))
    t.equal(sent.error, undefined)
    const task = sent.result
    t.match(task, {
      kind: 'task',
      status: { state: 'completed' },
      artifacts: [{ name: 'response', parts: [{ kind: 'text', text: 'Hello there' }] }],
      history: [
        { kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
        { kind: 'message', role: 'agent' }
      ]
    })
    const got: any = await client.getTask({ id: task.id, historyLength: 1 })
    t.match(got.result, { kind: 'task', id: task.id, status: { state: 'completed' } })
    t.equal(got.result.history.length, 1)
    const missing: any = await client.getTask({ id: 'no-such-task' })
    t.match(missing.error, { code: -32001, message: 'Unknown task: no-such-task' })
  })

  t.test('message/stream: the task, artifact-update chunks, a final status-update', async (t) => {
    const events: any[] = []
    for await (const e of client.sendMessageStream(ask('hi'))) events.push(e)
    t.match(events[0], { kind: 'task', status: { state: 'working' } })
    const chunks = events.filter((e) => e.kind === 'artifact-update')
    t.ok(chunks.length >= 2, `${chunks.length} artifact chunks`)
    t.match(chunks.at(-1), { lastChunk: true, artifact: { parts: [{ kind: 'text', text: 'Hello there' }] } })
    t.match(events.at(-1), { kind: 'status-update', final: true, status: { state: 'completed' } })
  })

  t.test('tasks/resubscribe joins a working task; tasks/cancel ends it', async (t) => {
    const sent: any = await client.sendMessage(ask('talk slowly', false))
    const id = sent.result.id
    t.equal(sent.result.status.state, 'working', 'blocking: false answers at once')
    const sub = client.resubscribeTask({ id })
    t.match((await sub.next()).value, { kind: 'task', id, status: { state: 'working' } })
    const canceled: any = await client.cancelTask({ id })
    t.match(canceled.result, {
      kind: 'task',
      id,
      status: {
        state: 'canceled',
        message: { kind: 'message', role: 'agent', parts: [{ text: 'Canceled by request' }] }
      }
    })
    let last: any
    for await (const e of sub) last = e
    t.match(last, { kind: 'status-update', final: true, status: { state: 'canceled' } })
    const again: any = await client.cancelTask({ id })
    t.match(again.error, { code: -32002 })
  })

  t.test('a task created through 0.3 is read through 1.0, and one of 1.0 through 0.3', async (t) => {
    const sent: any = await client.sendMessage(ask('hi'))
    const v10 = await clientFor(tp.url)
    const read: any = await v10.getTask({ id: sent.result.id, tenant: '', historyLength: undefined })
    t.equal(read.status.state, TaskState.TASK_STATE_COMPLETED)
    t.equal(textOf(read.artifacts[0]), 'Hello there')
    const endpoint = `${agentPath}/a2a`
    const made = await rpc(endpoint, {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }
    })
    t.equal(made.body.result.task.status.state, 'TASK_STATE_COMPLETED', '1.0 names answer 1.0 shapes')
    const back: any = await client.getTask({ id: made.body.result.task.id })
    t.match(back.result, { kind: 'task', status: { state: 'completed' } })
    // the header chooses too: a 1.0 name asked for in 0.3, a 0.3 name asked for in 1.0
    const as03 = await rpc(
      endpoint,
      { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: made.body.result.task.id } },
      { 'a2a-version': '0.3' }
    )
    t.match(as03.body.result, { kind: 'task', status: { state: 'completed' } })
    const as10 = await rpc(
      endpoint,
      { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { id: made.body.result.task.id } },
      { 'a2a-version': '1.0' }
    )
    t.match(as10.body.result, { status: { state: 'TASK_STATE_COMPLETED' } })
    t.equal(as10.body.result.kind, undefined)
  })

  t.test('a wrong 0.3 message is refused with the field named, creating nothing', async (t) => {
    const before = tp.platform.area(A2A).tasks.size
    const bad = await rpc(`${agentPath}/a2a`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: 'm', role: 'robot', parts: [{ kind: 'text', text: 'hi' }] } }
    })
    t.match(bad.body.error, { code: -32602, message: /role/ })
    t.equal(tp.platform.area(A2A).tasks.size, before, 'no task was created')
  })
})
