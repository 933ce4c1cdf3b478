// Webhooks end to end on one platform: A2A push notifications (1.0 raw JSON-RPC, 0.3 through its
// official client) received by a loopback server, signed, retried after a 500, with the client's
// token; the config methods owner-scoped and bounded; an interaction's webhook at its terminal
// state; URLs off the allow-list refused; the admin's view of the outbox.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { A2AClient } from 'a2a-sdk-03/client'
import { rpc, start } from '../a2a/a2a-helpers.js'
import { WEBHOOK_SECRET, startReceiver, verify, type Received } from '../helpers/webhook-receiver.js'

const ALICE = 'webhooks-alice-token-0123456789'
const BOB = 'webhooks-bob-token-0123456789abc'
const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

const message = (text: string): Record<string, unknown> => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text }]
})

t.test('webhooks', async (t) => {
  // every webhook id's first attempt answers 500 on /retry, so each delivery there is a retry
  const seen = new Set<string>()
  const receiver = await startReceiver((r) => {
    if (r.path.startsWith('/gone')) return 410
    if (r.path !== '/retry') return 200
    const id = String(r.headers['webhook-id'])
    if (seen.has(id)) return 200
    seen.add(id)
    return { status: 500, headers: { 'retry-after': '0' } }
  })
  t.teardown(receiver.close)
  const tp = await start({
    'platform.webhooks.secret': WEBHOOK_SECRET,
    'platform.webhooks.retry-base-ms': 10,
    'platform.webhooks.retry-max-ms': 50,
    'platform.a2a.push.max-configs-per-task': 2,
    'platform.interactions.http-write-enabled': true,
    'platform.auth.tokens': [
      { token: ALICE, principal: 'alice', roles: ['admin'] },
      { token: BOB, principal: 'bob', roles: [] }
    ]
  })
  t.teardown(tp.close)
  const endpoint = `${tp.url}/platform/agent/demo/a2a`
  const call = (method: string, params: unknown, token = ALICE): Promise<{ status: number; body: any }> =>
    rpc(endpoint, { jsonrpc: '2.0', id: 1, method, params }, auth(token))

  t.test('the cards advertise push notifications', async (t) => {
    const v10 = await (await fetch(`${tp.url}/platform/agent/demo/.well-known/agent-card.json`)).json()
    t.equal(v10.capabilities.pushNotifications, true)
    const v03 = await (await fetch(`${tp.url}/platform/agent/demo/.well-known/agent.json`)).json()
    t.equal(v03.capabilities.pushNotifications, true)
  })

  t.test('1.0: task updates pushed, signed, with the token, retried after a 500, in order', async (t) => {
    const sent = await call('SendMessage', {
      message: message('hello push'),
      configuration: {
        taskPushNotificationConfig: {
          url: `${receiver.url}/retry`,
          token: 'task-token-1',
          authentication: { scheme: 'Bearer', credentials: 'receiver-credential' }
        }
      }
    })
    const task = sent.body.result.task
    t.equal(task.status.state, 'TASK_STATE_COMPLETED')
    const mine = (r: Received): boolean =>
      r.path === '/retry' && (r.json?.statusUpdate?.taskId === task.id || r.json?.artifactUpdate?.taskId === task.id)
    await receiver.waitFor(
      (r) => mine(r) && r.status === 200 && r.json.statusUpdate?.status.state === 'TASK_STATE_COMPLETED'
    )
    const got = receiver.received.filter(mine)
    t.ok(
      got.every((r) => verify(r)),
      'every attempt carries a valid webhook-signature'
    )
    t.ok(got.every((r) => r.headers['x-a2a-notification-token'] === 'task-token-1'))
    t.ok(got.every((r) => r.headers.authorization === 'Bearer receiver-credential'))
    t.ok(got.every((r) => /^\d+$/.test(String(r.headers['webhook-timestamp']))))
    const answered = new Map<string, number[]>()
    for (const r of got) {
      const id = String(r.headers['webhook-id'])
      answered.set(id, [...(answered.get(id) ?? []), r.status])
    }
    t.ok(
      [...answered.values()].every((s) => s.join() === '500,200'),
      'each delivery: one 500, then the same webhook-id again, answered 200'
    )
    const delivered = got.filter((r) => r.status === 200).map((r) => r.json)
    t.equal(delivered.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED', 'the terminal status comes last')
    t.ok(
      delivered.some((e) => e.artifactUpdate?.lastChunk === true && e.artifactUpdate.artifact.parts[0].text !== ''),
      "the answer's last chunk, whole; no partial chunk is pushed"
    )
    t.notOk(delivered.some((e) => e.artifactUpdate?.lastChunk === false))
  })

  t.test('1.0: create, get, list, delete a config; owner-scoped and bounded', async (t) => {
    const sent = await call('SendMessage', { message: message('a task to watch') })
    const taskId = sent.body.result.task.id
    const created = await call('CreateTaskPushNotificationConfig', {
      taskId,
      id: 'cfg-a',
      url: `${receiver.url}/a`,
      token: 'tok-a'
    })
    t.same(created.body.result, { taskId, id: 'cfg-a', url: `${receiver.url}/a`, token: 'tok-a' })
    const got = await call('GetTaskPushNotificationConfig', { taskId, id: 'cfg-a' })
    t.same(got.body.result, created.body.result)
    const list = await call('ListTaskPushNotificationConfigs', { taskId })
    t.same(list.body.result, { configs: [created.body.result], nextPageToken: '' })
    const other = await call('GetTaskPushNotificationConfig', { taskId, id: 'cfg-a' }, BOB)
    t.equal(other.body.error.code, -32001, "another principal's task is unknown to bob")
    const bobCreate = await call('CreateTaskPushNotificationConfig', { taskId, url: `${receiver.url}/b` }, BOB)
    t.equal(bobCreate.body.error.code, -32001)
    const second = await call('CreateTaskPushNotificationConfig', { taskId, url: `${receiver.url}/b` })
    t.type(second.body.result.id, 'string', 'an id is given when none is asked for')
    // pages in creation order; a replaced config keeps its place
    await call('CreateTaskPushNotificationConfig', { taskId, id: 'cfg-a', url: `${receiver.url}/a`, token: 'tok-a' })
    const page1 = (await call('ListTaskPushNotificationConfigs', { taskId, pageSize: 1 })).body.result
    t.same(page1.configs, [created.body.result])
    t.not(page1.nextPageToken, '')
    const page2 = await call('ListTaskPushNotificationConfigs', { taskId, pageSize: 1, pageToken: page1.nextPageToken })
    t.same(page2.body.result, { configs: [second.body.result], nextPageToken: '' })
    for (const bad of [{ pageSize: 0 }, { pageSize: 101 }, { pageSize: 1.5 }, { pageToken: 'not-ours' }]) {
      const refused = await call('ListTaskPushNotificationConfigs', { taskId, ...bad })
      t.equal(refused.body.error.code, -32602, JSON.stringify(bad))
    }
    const third = await call('CreateTaskPushNotificationConfig', { taskId, url: `${receiver.url}/c` })
    t.equal(third.body.error.code, -32602)
    t.match(third.body.error.message, /platform\.a2a\.push\.max-configs-per-task/)
    const deleted = await call('DeleteTaskPushNotificationConfig', { taskId, id: 'cfg-a' })
    t.same(deleted.body.result, {})
    const gone = await call('GetTaskPushNotificationConfig', { taskId, id: 'cfg-a' })
    t.equal(gone.body.error.code, -32001)
  })

  t.test('a URL off the allow-list is refused when it is given, and nothing is kept', async (t) => {
    const sent = await call('SendMessage', { message: message('another task') })
    const taskId = sent.body.result.task.id
    for (const url of [
      'http://example.com/hook',
      'http://10.0.0.1/hook',
      'ftp://127.0.0.1/x',
      'http://u:p@127.0.0.1/'
    ]) {
      const refused = await call('CreateTaskPushNotificationConfig', { taskId, url })
      t.equal(refused.body.error.code, -32602, url)
    }
    t.same((await call('ListTaskPushNotificationConfigs', { taskId })).body.result.configs, [])
    const send = await call('SendMessage', {
      message: message('refused'),
      configuration: { taskPushNotificationConfig: { url: 'http://169.254.169.254/latest' } }
    })
    t.equal(send.body.error.code, -32602)
    t.match(send.body.error.message, /169\.254\.169\.254.*allowed-hosts/)
  })

  t.test(
    '0.3: the official 0.3 client sets, reads and deletes a config; the task is pushed in 0.3 shape',
    async (t) => {
      const client = await A2AClient.fromCardUrl(`${tp.url}/platform/agent/demo/.well-known/agent.json`, {
        fetchImpl: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...auth(ALICE) } })
      })
      const sent: any = await client.sendMessage({
        message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hi 0.3' }] },
        configuration: { blocking: true, pushNotificationConfig: { url: `${receiver.url}/v03`, token: 'tok-03' } }
      })
      const taskId = sent.result.id
      const pushed = await receiver.waitFor(
        (r) => r.path === '/v03' && r.json?.id === taskId && r.json.status.state === 'completed'
      )
      t.match(pushed.json, { kind: 'task', id: taskId, status: { state: 'completed' } })
      t.equal(pushed.headers['x-a2a-notification-token'], 'tok-03')
      t.ok(verify(pushed))
      const set: any = await client.setTaskPushNotificationConfig({
        taskId,
        pushNotificationConfig: { id: 'cfg-03', url: `${receiver.url}/v03b`, token: 'tok-b' }
      })
      t.same(set.result, {
        taskId,
        pushNotificationConfig: { id: 'cfg-03', url: `${receiver.url}/v03b`, token: 'tok-b' }
      })
      const got: any = await client.getTaskPushNotificationConfig({
        id: taskId,
        pushNotificationConfigId: 'cfg-03'
      } as any)
      t.same(got.result, set.result)
      const own: any = await client.getTaskPushNotificationConfig({ id: taskId })
      t.equal(
        own.result.pushNotificationConfig.id,
        taskId,
        "without an id, the task's own config (set with the message)"
      )
      const list: any = await client.listTaskPushNotificationConfig({ id: taskId })
      t.equal(list.result.length, 2)
      const deleted: any = await client.deleteTaskPushNotificationConfig({
        id: taskId,
        pushNotificationConfigId: 'cfg-03'
      })
      t.equal(deleted.result, null)
    }
  )

  t.test('an interaction calls its webhook once at the terminal state with its final header', async (t) => {
    const post = async (body: unknown, token = ALICE): Promise<{ status: number; body: any }> => {
      const r = await fetch(`${tp.url}/api/interactions`, {
        method: 'POST',
        headers: { ...auth(token), 'content-type': 'application/json' },
        body: JSON.stringify(body)
      })
      return { status: r.status, body: await r.json() }
    }
    const created = await post({ message: 'hello webhook', webhook: { url: `${receiver.url}/int` } })
    t.equal(created.status, 200)
    t.equal(created.body.status, 'COMPLETED')
    const hook = await receiver.waitFor((r) => r.path === '/int' && r.json?.data?.id === created.body.id)
    t.ok(verify(hook))
    t.match(hook.json, {
      type: 'interaction.completed',
      data: { id: created.body.id, status: 'COMPLETED', userId: 'alice' }
    })
    t.equal(hook.json.data.finalText, created.body.finalText)
    t.notOk('steps' in hook.json.data, 'the header, without the steps')
    // the verification snippet of docs/interactions.md, run as a reader would copy it
    const page = readFileSync(new URL('../../docs/interactions.md', import.meta.url), 'utf8')
    const snippet = /```js\n([\s\S]*?export function verifyWebhook[\s\S]*?)```/.exec(page)?.[1]
    t.ok(snippet, 'docs/interactions.md holds the snippet')
    const dir = mkdtempSync(join(tmpdir(), 'verify-webhook-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    writeFileSync(join(dir, 'verify-webhook.mjs'), snippet!)
    const { verifyWebhook } = (await import(join(dir, 'verify-webhook.mjs'))) as {
      verifyWebhook: (secret: string, headers: unknown, body: string) => boolean
    }
    t.equal(verifyWebhook(WEBHOOK_SECRET, hook.headers, hook.body), true, 'the snippet accepts a real delivery')
    t.equal(
      verifyWebhook(WEBHOOK_SECRET, hook.headers, hook.body.replace('alice', 'bob')),
      false,
      'and refuses a changed body'
    )
    t.equal(verifyWebhook(`whsec_${Buffer.alloc(32, 8).toString('base64')}`, hook.headers, hook.body), false)

    const background = await post({
      message: 'in the background',
      background: true,
      webhook: { url: `${receiver.url}/int` }
    })
    t.equal(background.body.status, 'RUNNING')
    const later = await receiver.waitFor((r) => r.path === '/int' && r.json?.data?.id === background.body.id)
    t.equal(later.json.data.status, 'COMPLETED')

    const refused = await post({ message: 'x', webhook: { url: 'http://example.com/' } })
    t.equal(refused.status, 400)
    t.equal(refused.body.code, 'PLT_ERR_WEBHOOK_HOST_NOT_ALLOWED')
    t.equal((await post({ message: 'x', webhook: { url: `${receiver.url}/int` }, store: false })).status, 400)
    t.equal((await post({ message: 'x', webhook: 'http://127.0.0.1/' })).body.code, 'PLT_ERR_INVALID_BODY')
    t.equal((await post({ message: 'x', webhook: { url: `${receiver.url}/int`, secret: 'x' } })).status, 400)
  })

  t.test('the admin lists the outbox and the deliveries given up; operators only', async (t) => {
    const r = await fetch(`${tp.url}/api/interactions`, {
      method: 'POST',
      headers: { ...auth(ALICE), 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'to a gone receiver', webhook: { url: `${receiver.url}/gone?key=secret` } })
    })
    const { id } = await r.json()
    const read = async (token?: string): Promise<{ status: number; body: any }> => {
      const res = await fetch(`${tp.url}/api/admin/webhooks`, { headers: token === undefined ? {} : auth(token) })
      return { status: res.status, body: await res.json() }
    }
    await receiver.waitFor((r) => r.path.startsWith('/gone') && r.json?.data?.id === id)
    // the answer is in; its bookkeeping (a write) lands right after it
    let view = await read(ALICE)
    while (!view.body.failures.some((f: any) => f.ref === id)) {
      await new Promise((res) => setTimeout(res, 10))
      view = await read(ALICE)
    }
    t.equal(view.status, 200)
    t.match(view.body, { ready: true, limits: { maxPending: Number, maxPendingPerPrincipal: Number } })
    const failure = view.body.failures.find((f: any) => f.ref === id)
    t.match(failure, { source: 'interactions', owner: 'alice', attempts: 1, lastAttempt: { status: 410 } })
    t.equal(failure.url, `${receiver.url}/gone`, 'shown without its query')
    t.notMatch(
      JSON.stringify(view.body),
      /task-token-1|receiver-credential|key=secret/,
      'no token, credential or query'
    )
    // an operator read: the route gate asks for the admin role, whatever the read flags say
    t.match(await read(BOB), { status: 403, body: { code: 'PLT_ERR_ADMIN_ROLE_REQUIRED' } })
    t.match(await read(), { status: 401, body: { code: 'PLT_ERR_ADMIN_OPERATOR_READ_AUTH_REQUIRED' } })
  })
})
