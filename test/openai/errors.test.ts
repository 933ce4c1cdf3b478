import t from 'tap'
import OpenAI from 'openai'
import { openAiError } from '../../runtime/openai/wire-error.js'
import { ALICE, BOB, client, failure, startOpenAi } from './helpers.js'

const tp = await startOpenAi({
  // one byte a minute: each principal's first create passes (a request costs at most the whole
  // budget), the next is over the quota for a minute, whatever the machine's speed
  'platform.interactions.quota.bytes-per-minute': 1
})
t.teardown(tp.close)
const alice = client(tp)
const anonymous = new OpenAI({ baseURL: `${tp.url}/v1`, apiKey: 'not-a-known-token-000', maxRetries: 0 })

/** A raw request, for bodies the client cannot send. */
async function raw(method: string, path: string, body?: string, token = ALICE): Promise<{ status: number; json: any }> {
  const res = await fetch(tp.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body } : {})
  })
  return { status: res.status, json: await res.json() }
}

// a 1x1 PNG: the demo runtime takes no images, whatever they show
const PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='

t.test('400: each refused body, in OpenAI shape with the param named; nothing is created', async (t) => {
  const rows: [unknown, string, string][] = [
    [{ input: 'hi' }, 'model', 'PLT_ERR_OPENAI_INVALID_REQUEST'],
    [{ model: 'demo', input: '' }, 'input', 'PLT_ERR_OPENAI_INVALID_REQUEST'],
    [{ model: 'demo', input: 'hi', frobnicate: 1 }, 'frobnicate', 'PLT_ERR_OPENAI_UNSUPPORTED'],
    [{ model: 'demo', input: 'hi', stream: 'yes' }, 'stream', 'PLT_ERR_OPENAI_INVALID_REQUEST'],
    [{ model: 'demo', input: [{ role: 'assistant', content: 'x' }] }, 'input', 'PLT_ERR_OPENAI_INVALID_REQUEST'],
    [{ model: 'demo', input: [{ role: 'tool', content: 'x' }] }, 'input[0].role', 'PLT_ERR_OPENAI_INVALID_REQUEST'],
    [
      { model: 'demo', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:,' }] }] },
      'input[0].content[0].image_url',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [
      { model: 'demo', input: [{ role: 'user', content: [{ type: 'input_image', image_url: PIXEL }] }] },
      'input',
      'PLT_ERR_OPENAI_UNSUPPORTED'
    ],
    [
      {
        model: 'demo',
        input: [
          { role: 'user', content: [{ type: 'input_image', image_url: PIXEL }] },
          { role: 'assistant', content: 'a pixel' },
          { role: 'user', content: 'and?' }
        ]
      },
      'input[0].content',
      'PLT_ERR_OPENAI_UNSUPPORTED'
    ],
    [{ model: 'demo', input: 'hi', tools: [{ type: 'web_search' }] }, 'tools[0].type', 'PLT_ERR_OPENAI_UNSUPPORTED'],
    [
      { model: 'demo', input: 'hi', tools: [{ type: 'function', name: 'a b' }] },
      'tools[0].name',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [{ model: 'demo', input: 'hi', tool_choice: 'required' }, 'tool_choice', 'PLT_ERR_OPENAI_UNSUPPORTED'],
    [{ model: 'demo', input: 'hi', max_output_tokens: 0 }, 'max_output_tokens', 'PLT_ERR_OPENAI_INVALID_REQUEST'],
    [
      { model: 'demo', input: [{ type: 'function_call_output', call_id: 'c1', output: 'x' }] },
      'input',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [
      { model: 'demo', input: [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: '[1]' }] },
      'input[0].arguments',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [
      { model: 'demo', input: 'hi', text: { format: { type: 'json_schema', name: 'x', schema: {} } } },
      'text.format',
      'PLT_ERR_OPENAI_UNSUPPORTED'
    ],
    [
      { model: 'demo', input: 'hi', text: { format: { type: 'json_object' } } },
      'text.format',
      'PLT_ERR_OPENAI_UNSUPPORTED'
    ],
    [
      { model: 'demo', input: 'hi', text: { format: { type: 'xml' } } },
      'text.format.type',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [
      { model: 'demo', input: 'hi', text: { format: { type: 'json_schema', schema: {} } } },
      'text.format.name',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [
      { model: 'demo', input: 'hi', text: { format: { type: 'json_schema', name: 'x', schema: { required: 'a' } } } },
      'text.format.schema',
      'PLT_ERR_OPENAI_INVALID_REQUEST'
    ],
    [{ model: 'demo', input: 'hi', metadata: { roles: 'admin' } }, 'metadata.roles', 'PLT_ERR_OPENAI_INVALID_REQUEST'],
    [{ model: 'demo', input: 'hi', metadata: { n: 1 } }, 'metadata.n', 'PLT_ERR_OPENAI_INVALID_REQUEST'],
    [{ model: 'demo', input: 'hi', background: true, store: false }, 'background', 'PLT_ERR_OPENAI_INVALID_REQUEST']
  ]
  for (const [body, param, code] of rows) {
    const f = await failure(alice.responses.create(body as never))
    t.match(
      f,
      { name: 'BadRequestError', status: 400, type: 'invalid_request_error', param, code },
      JSON.stringify(body)
    )
  }
  const malformed = await raw('POST', '/v1/responses', '{"model":')
  t.match(malformed, {
    status: 400,
    json: { error: { type: 'invalid_request_error', code: 'PLT_ERR_MALFORMED_JSON' } }
  })
  const empty = await raw('POST', '/v1/responses', '')
  t.match(empty, { status: 400, json: { error: { code: 'PLT_ERR_EMPTY_BODY' } } })
  const bad = await raw('GET', '/v1/responses/x?stream=true&starting_after=-1')
  t.equal(bad.status, 404, 'an unknown id is a 404 before the query is read')
  const list = await fetch(`${tp.url}/api/interactions`, { headers: { authorization: `Bearer ${ALICE}` } })
  t.same(await list.json(), [], 'no refused body created an interaction')
})

t.test('401: a write needs a principal; anonymous reads own nothing', async (t) => {
  t.match(await failure(anonymous.responses.create({ model: 'demo', input: 'hi' })), {
    name: 'AuthenticationError',
    status: 401,
    type: 'authentication_error',
    code: 'PLT_ERR_OPENAI_AUTH_REQUIRED'
  })
  t.match(await failure(anonymous.responses.delete('int-x')), { status: 401 })
  t.match(await failure(anonymous.responses.cancel('int-x')), { status: 401 })
  const mine = await alice.responses.create({ model: 'demo', input: 'hi' })
  t.match(await failure(anonymous.responses.retrieve(mine.id)), { name: 'NotFoundError', status: 404 })
  t.ok((await anonymous.models.list()).data.length > 0, 'anyone lists the models')
})

t.test('404: unknown model, unknown response', async (t) => {
  t.match(await failure(alice.responses.create({ model: 'gpt-nope', input: 'hi' })), {
    name: 'NotFoundError',
    status: 404,
    param: 'model',
    code: 'PLT_ERR_OPENAI_UNKNOWN_MODEL'
  })
  t.match(await failure(alice.responses.retrieve('int-unknown')), {
    status: 404,
    code: 'PLT_ERR_OPENAI_RESPONSE_NOT_FOUND'
  })
  t.match(await failure(alice.responses.retrieve('bad id!')), { status: 404 })
})

t.test('429: over the per-principal quota, with Retry-After; the refused request starts nothing', async (t) => {
  const bob = client(tp, BOB)
  t.equal((await bob.responses.create({ model: 'demo', input: 'hello' })).status, 'completed')
  const over = await fetch(`${tp.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BOB}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo', input: 'hi' })
  })
  t.equal(over.status, 429)
  t.match(over.headers.get('retry-after'), /^\d+$/)
  t.match(await over.json(), {
    error: { type: 'rate_limit_error', code: 'PLT_ERR_INTERACTIONS_QUOTA', param: null, message: /quota/ }
  })
  t.match(await failure(bob.responses.create({ model: 'demo', input: 'hi' })), { name: 'RateLimitError', status: 429 })
  const list = await fetch(`${tp.url}/api/interactions`, { headers: { authorization: `Bearer ${BOB}` } })
  t.equal((await list.json()).length, 1, 'only the first create made an interaction')
})

t.test('403: writes disabled by the interactions flag', async (t) => {
  const off = await startOpenAi({ 'platform.interactions.http-write-enabled': false })
  t.teardown(off.close)
  const c = client(off)
  for (const call of [
    () => c.responses.create({ model: 'demo', input: 'hi' }),
    () => c.responses.cancel('int-x'),
    () => c.responses.delete('int-x')
  ])
    t.match(await failure(call()), {
      name: 'PermissionDeniedError',
      status: 403,
      type: 'permission_error',
      code: 'PLT_ERR_OPENAI_WRITE_DISABLED'
    })
})

t.test('500: a failure that is not a platform code says nothing more than server_error', async (t) => {
  t.same(openAiError(new Error('secret detail')), {
    status: 500,
    body: {
      error: {
        message: openAiError(new Error('x')).body.error.message,
        type: 'server_error',
        param: null,
        code: 'PLT_ERR_INTERNAL'
      }
    }
  })
  t.notMatch(openAiError(new Error('secret detail')).body.error.message, /secret/)
})
