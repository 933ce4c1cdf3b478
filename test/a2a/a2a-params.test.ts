// Each A2A method's params against its schema: the -32602 message names the field and the rule,
// null means unset, unknown fields pass, and what the schema cannot say is still refused.
import t, { type Test } from 'tap'
import { parseList, parseSend, parseTaskId } from '../../runtime/a2a/params.js'

const message = (m: Record<string, unknown> = {}) => ({
  messageId: 'm-1',
  role: 'ROLE_USER',
  parts: [{ text: 'hi' }],
  ...m
})
const send = (p: Record<string, unknown> = {}, m: Record<string, unknown> = {}) => ({ message: message(m), ...p })

function fails(t: Test, f: () => unknown, message: string, code = -32602): void {
  t.throws(f, { rpcCode: code, message }, message)
}

t.test('SendMessage: each rule, named', async (t) => {
  const cases: [unknown, string][] = [
    [undefined, 'params must be an object'],
    [[], 'params must be an object'],
    [{}, 'message is required'],
    [{ message: 'hi' }, 'message must be an object'],
    [send({}, { messageId: undefined }), 'message.messageId is required'],
    [send({}, { messageId: '' }), 'message.messageId must be a string of 1 to 128 characters'],
    [send({}, { messageId: 'x'.repeat(129) }), 'message.messageId must be a string of 1 to 128 characters'],
    [send({}, { role: 'ROLE_AGENT' }), 'message.role must be one of ROLE_USER, user, got "ROLE_AGENT"'],
    [send({}, { parts: 'hi' }), 'message.parts must be a list'],
    [send({}, { parts: [] }), 'message.parts must hold at least 1 item'],
    [send({}, { parts: [{ text: 'a' }, 'b'] }), 'message.parts[1] must be an object'],
    [
      send({}, { parts: [{ mediaType: 'text/plain' }] }),
      'message.parts[0] must set exactly one of text, url, raw, data'
    ],
    [send({}, { parts: [{ text: 'a', data: {} }] }), 'message.parts[0] must set exactly one of text, url, raw, data'],
    [send({}, { parts: [{ text: 5 }] }), 'message.parts[0].text must be a string'],
    [send({}, { parts: [{ url: 5 }] }), 'message.parts[0].url must be a string'],
    [send({}, { parts: [{ text: 'a', metadata: [] }] }), 'message.parts[0].metadata must be an object'],
    [send({}, { contextId: 7 }), 'message.contextId must be a string of 1 to 128 characters'],
    [send({}, { taskId: '' }), 'message.taskId must be a string of 1 to 128 characters'],
    [send({}, { metadata: 'x' }), 'message.metadata must be an object'],
    [send({}, { referenceTaskIds: ['t', 2] }), 'message.referenceTaskIds[1] must be a string'],
    [send({ configuration: 3 }), 'configuration must be an object'],
    [
      send({ configuration: { historyLength: -1 } }),
      'configuration.historyLength must be an integer from 0 to 10000, got -1'
    ],
    [
      send({ configuration: { historyLength: 2.5 } }),
      'configuration.historyLength must be an integer from 0 to 10000, got 2.5'
    ],
    [send({ configuration: { returnImmediately: 'yes' } }), 'configuration.returnImmediately must be a boolean'],
    [
      send({ configuration: { acceptedOutputModes: 'text/plain' } }),
      'configuration.acceptedOutputModes must be a list'
    ],
    [send({ metadata: [] }), 'metadata must be an object'],
    [send({}, { parts: [{ text: '  ' }] }), 'message.parts hold no text']
  ]
  for (const [params, detail] of cases) fails(t, () => parseSend(params), `Invalid params: ${detail}`)
})

t.test('SendMessage: what the agent cannot answer is -32005, not a params error', async (t) => {
  fails(
    t,
    () => parseSend(send({}, { parts: [{ url: 'https://x/y.png' }] })),
    'This agent reads text parts only (defaultInputModes text/plain); the message has none',
    -32005
  )
  fails(
    t,
    () => parseSend(send({ configuration: { acceptedOutputModes: ['image/png'] } })),
    'This agent answers text/plain, which configuration.acceptedOutputModes [image/png] leaves out',
    -32005
  )
})

t.test('SendMessage: null is unset, unknown fields and the 0.3 spellings pass', async (t) => {
  t.same(parseSend(send({ configuration: null, metadata: null }, { contextId: null, taskId: null, metadata: null })), {
    message: message(),
    text: 'hi',
    returnImmediately: false
  })
  const old = parseSend({
    message: { kind: 'message', messageId: 'm-2', role: 'user', parts: [{ kind: 'text', text: 'a' }, { text: 'b' }] },
    configuration: { blocking: false, historyLength: 0, pushNotificationConfig: null },
    newerField: { anything: true }
  })
  t.equal(old.message.role, 'ROLE_USER', 'the 0.3 role is read as ROLE_USER')
  t.equal(old.text, 'a\nb', 'text parts joined by newlines')
  t.equal(old.returnImmediately, true, '`blocking: false` is returnImmediately')
  t.equal(old.historyLength, 0)
  const full = parseSend(
    send(
      { configuration: { returnImmediately: true, acceptedOutputModes: ['text/*'] }, metadata: { k: 1 } },
      { contextId: 'c', taskId: 't', metadata: { m: 2 }, parts: [{ text: 'q', data: undefined }] }
    )
  )
  t.match(full, {
    message: { contextId: 'c', taskId: 't', metadata: { m: 2 } },
    metadata: { k: 1 },
    returnImmediately: true
  })
})

t.test('GetTask, CancelTask and SubscribeToTask: each its own params', async (t) => {
  fails(t, () => parseTaskId({}), 'Invalid params: id is required')
  fails(t, () => parseTaskId({ id: 5 }), 'Invalid params: id must be a string of 1 to 128 characters')
  fails(
    t,
    () => parseTaskId({ id: 't', historyLength: 10_001 }),
    'Invalid params: historyLength must be an integer from 0 to 10000, got 10001'
  )
  fails(t, () => parseTaskId({ id: 't', metadata: 'x' }, 'CancelTask'), 'Invalid params: metadata must be an object')
  fails(t, () => parseTaskId(null, 'SubscribeToTask'), 'Invalid params: params must be an object')
  t.same(parseTaskId({ id: 't', historyLength: null, tenant: '' }), { id: 't' })
  t.same(parseTaskId({ id: 't', historyLength: 2 }), { id: 't', historyLength: 2 })
  t.same(parseTaskId({ id: 't', metadata: { why: 'done' } }, 'CancelTask'), { id: 't' })
})

t.test('ListTasks: each rule, named; defaults when unset', async (t) => {
  const cases: [unknown, string][] = [
    ['x', 'params must be an object'],
    [{ pageSize: 0 }, 'pageSize must be an integer from 1 to 100, got 0'],
    [{ pageSize: '5' }, 'pageSize must be an integer from 1 to 100, got "5"'],
    [{ contextId: '' }, 'contextId must be a string of 1 to 128 characters'],
    [{ pageToken: 5 }, 'pageToken must be a string of at most 256 characters'],
    [{ historyLength: -2 }, 'historyLength must be an integer from 0 to 10000, got -2'],
    [{ includeArtifacts: 1 }, 'includeArtifacts must be a boolean'],
    [{ statusTimestampAfter: 5 }, 'statusTimestampAfter must be a string'],
    [{ statusTimestampAfter: 'yesterday' }, 'statusTimestampAfter must be an ISO-8601 timestamp']
  ]
  for (const [params, detail] of cases) fails(t, () => parseList(params), `Invalid params: ${detail}`)
  t.throws(() => parseList({ status: 'DONE' }), {
    rpcCode: -32602,
    message: /^Invalid params: status must be one of TASK_STATE_SUBMITTED, .*, got "DONE"$/
  })
  t.same(parseList(undefined), { pageSize: 50, includeArtifacts: false })
  t.same(parseList({ status: 'TASK_STATE_UNSPECIFIED', pageToken: '', contextId: null, pageSize: null }), {
    pageSize: 50,
    includeArtifacts: false
  })
  t.same(
    parseList({
      contextId: 'c',
      status: 'TASK_STATE_WORKING',
      pageSize: 100,
      pageToken: 'tok',
      historyLength: 0,
      statusTimestampAfter: '2026-01-02T03:04:05Z',
      includeArtifacts: true
    }),
    {
      contextId: 'c',
      status: 'TASK_STATE_WORKING',
      pageSize: 100,
      pageToken: 'tok',
      historyLength: 0,
      after: Date.parse('2026-01-02T03:04:05Z'),
      includeArtifacts: true
    }
  )
})
