/**
 * JSON schemas of the Responses wire format, written from the Open Responses OpenAPI document
 * (`openresponses/openresponses`, `public/openapi/openapi.json`: `ResponseResource`,
 * its output items, usage and streamed events). Each rule says which fact it encodes.
 */
import { Ajv2020 as Ajv } from 'ajv/dist/2020.js'

const nullable = (s: object) => ({ anyOf: [s, { type: 'null' }] })

// output items: `message` (assistant, `output_text` parts with `text` and `annotations`) and
// `function_call` (`call_id`, `name`, `arguments` as a JSON string), each with `id` and `status`
const outputText = {
  type: 'object',
  required: ['type', 'text', 'annotations'],
  properties: { type: { const: 'output_text' }, text: { type: 'string' }, annotations: { type: 'array' } }
}
const messageItem = {
  type: 'object',
  required: ['type', 'id', 'status', 'role', 'content'],
  properties: {
    type: { const: 'message' },
    id: { type: 'string' },
    status: { enum: ['in_progress', 'completed', 'incomplete'] },
    role: { const: 'assistant' },
    content: { type: 'array', items: outputText }
  }
}
const functionCallItem = {
  type: 'object',
  required: ['type', 'id', 'status', 'call_id', 'name', 'arguments'],
  properties: {
    type: { const: 'function_call' },
    id: { type: 'string' },
    status: { enum: ['in_progress', 'completed', 'incomplete'] },
    call_id: { type: 'string' },
    name: { type: 'string' },
    arguments: { type: 'string' }
  }
}
const outputItem = { oneOf: [messageItem, functionCallItem] }

// usage: input, output and total tokens with their details objects
const usage = {
  type: 'object',
  required: ['input_tokens', 'output_tokens', 'total_tokens', 'input_tokens_details', 'output_tokens_details'],
  properties: {
    input_tokens: { type: 'integer', minimum: 0 },
    output_tokens: { type: 'integer', minimum: 0 },
    total_tokens: { type: 'integer', minimum: 0 },
    input_tokens_details: { type: 'object' },
    output_tokens_details: { type: 'object' }
  }
}

// a response object has all of these keys, nullable ones as null; `status` one of six values
export const RESPONSE_KEYS = [
  'id',
  'object',
  'created_at',
  'completed_at',
  'status',
  'incomplete_details',
  'model',
  'previous_response_id',
  'instructions',
  'output',
  'error',
  'tools',
  'tool_choice',
  'truncation',
  'parallel_tool_calls',
  'text',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'top_logprobs',
  'temperature',
  'reasoning',
  'usage',
  'max_output_tokens',
  'max_tool_calls',
  'store',
  'background',
  'service_tier',
  'metadata',
  'safety_identifier',
  'prompt_cache_key'
]
export const responseSchema = {
  type: 'object',
  required: RESPONSE_KEYS,
  properties: {
    id: { type: 'string' },
    object: { const: 'response' },
    created_at: { type: 'integer' },
    completed_at: nullable({ type: 'integer' }),
    status: { enum: ['queued', 'in_progress', 'completed', 'failed', 'incomplete', 'cancelled'] },
    incomplete_details: nullable({ type: 'object', required: ['reason'] }),
    model: { type: 'string' },
    previous_response_id: nullable({ type: 'string' }),
    instructions: nullable({ type: 'string' }),
    output: { type: 'array', items: outputItem },
    error: nullable({ type: 'object', required: ['code', 'message'] }),
    tools: { type: 'array' },
    usage: nullable(usage),
    store: { type: 'boolean' },
    background: { type: 'boolean' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } }
  }
}

// every streamed event carries `type` and `sequence_number`; then the keys its type requires
const base = ['type', 'sequence_number']
const event = (type: string, keys: string[], properties: Record<string, unknown> = {}) => ({
  if: { properties: { type: { const: type } }, required: ['type'] },
  then: {
    required: [...base, ...keys],
    properties: { sequence_number: { type: 'integer', minimum: 0 }, ...properties }
  }
})
const withResponse = { response: responseSchema }
const part = ['item_id', 'output_index', 'content_index']
export const eventSchema = {
  type: 'object',
  required: base,
  properties: {
    type: {
      enum: [
        'response.created',
        'response.queued',
        'response.in_progress',
        'response.completed',
        'response.failed',
        'response.incomplete',
        'response.output_item.added',
        'response.output_item.done',
        'response.content_part.added',
        'response.content_part.done',
        'response.output_text.delta',
        'response.output_text.done',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'error'
      ]
    }
  },
  allOf: [
    ...[
      'response.created',
      'response.queued',
      'response.in_progress',
      'response.completed',
      'response.failed',
      'response.incomplete'
    ].map((t) => event(t, ['response'], withResponse)),
    event('response.output_item.added', ['output_index', 'item'], { item: outputItem }),
    event('response.output_item.done', ['output_index', 'item'], { item: outputItem }),
    event('response.content_part.added', [...part, 'part'], { part: outputText }),
    event('response.content_part.done', [...part, 'part'], { part: outputText }),
    event('response.output_text.delta', [...part, 'delta'], { delta: { type: 'string' } }),
    event('response.output_text.done', [...part, 'text'], { text: { type: 'string' } }),
    event('response.function_call_arguments.delta', ['item_id', 'output_index', 'delta'], {
      delta: { type: 'string' }
    }),
    event('response.function_call_arguments.done', ['item_id', 'output_index', 'arguments'], {
      arguments: { type: 'string' }
    }),
    event('error', ['error'])
  ]
}

const ajv = new Ajv({ allErrors: true, strict: false })
export const validResponse = ajv.compile(responseSchema)
export const validEvent = ajv.compile(eventSchema)

/** The validator's errors as one line, for a failing assertion's message. */
export const why = (v: { errors?: unknown }): string => JSON.stringify(v.errors ?? [])
