/**
 * The OpenAPI descriptions of the /api/interactions routes, handed to the HTTP server next to the
 * routes themselves; the schemas say what routes.ts accepts.
 */
import type { HttpServer, JsonSchema, RouteDoc } from '../http/index.js'
import { LIST_DEFAULT_LIMIT } from './routes.js'
import { INTERACTION_ID, MAX_LIST_LIMIT } from './store-input.js'

const BASE = '/api/interactions'
// the flag platform.interactions.http-write-enabled (403), then a principal (401)
const WRITE = { write: 'platform.interactions.http-write-enabled' }
const text = { type: ['string', 'null'], minLength: 1 }

const REQUEST: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['message'],
  properties: {
    message: { type: 'string', minLength: 1, pattern: '\\S' },
    previousInteractionId: { type: ['string', 'null'], pattern: INTERACTION_ID.source },
    agentId: text,
    model: text,
    systemPrompt: { type: ['string', 'null'] },
    metadata: {
      type: ['object', 'null'],
      description: 'Free keys except action, tool_name, tool_args, tool_args_preview and roles'
    },
    background: { type: ['boolean', 'null'], default: false },
    store: { type: ['boolean', 'null'], default: true },
    webhook: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['url'],
      properties: { url: { type: 'string', minLength: 1 } },
      description:
        'POSTed once, signed, with the final header when the run ends; its host must be on platform.webhooks.allowed-hosts'
    }
  }
}

const DOCS: [method: 'GET' | 'POST' | 'DELETE', path: string, doc: RouteDoc][] = [
  [
    'POST',
    '',
    { summary: 'Start an interaction (Idempotency-Key honoured)', gate: WRITE, body: REQUEST, statuses: [409] }
  ],
  [
    'GET',
    '',
    {
      summary: "The caller's interactions, newest first; the next page in X-Next-Cursor and Link",
      gate: { read: 'owner' },
      query: {
        type: 'object',
        properties: {
          limit: {
            type: 'integer',
            minimum: 1,
            default: LIST_DEFAULT_LIMIT,
            description: `Capped at ${MAX_LIST_LIMIT}`
          },
          conversationId: { type: 'string', pattern: '^[\\x21-\\x7e]{1,256}$' },
          cursor: { type: 'string', description: 'The X-Next-Cursor of the previous page' }
        }
      }
    }
  ],
  [
    'GET',
    '/{id}',
    {
      summary: 'One interaction; with stream=true its steps as server-sent events',
      gate: { read: 'owner' },
      query: {
        type: 'object',
        properties: {
          stream: { type: 'string', enum: ['true', 'false'] },
          after: { type: 'integer', minimum: -1, description: 'Resume the stream after this step seq' }
        }
      }
    }
  ],
  [
    'POST',
    '/{id}/continue',
    { summary: 'Continue an interaction with a new message', gate: WRITE, body: REQUEST, statuses: [409] }
  ],
  ['POST', '/{id}/cancel', { summary: 'Ask a running interaction to stop', gate: WRITE }],
  ['DELETE', '/{id}', { summary: 'Delete an interaction and its steps', gate: WRITE }]
]

export function describeRoutes(http: HttpServer): void {
  for (const [method, path, doc] of DOCS) http.describe(method, BASE + path, doc)
}
