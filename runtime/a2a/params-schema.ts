/**
 * The params of each A2A method as JSON Schema (2020-12), in their ProtoJSON form: camelCase
 * fields, enums by name, `null` for an optional field meaning unset. Unknown fields are allowed,
 * so a newer client's extra fields are ignored rather than refused.
 */
import { TASK_STATES } from './a2a-types.js'

export const MAX_ID_LENGTH = 128
export const MAX_HISTORY_LENGTH = 10_000
export const MAX_PAGE_TOKEN_LENGTH = 256
export const LIST_DEFAULT_PAGE_SIZE = 50
export const LIST_MAX_PAGE_SIZE = 100

type Schema = Record<string, unknown>
type Type = 'string' | 'integer' | 'boolean' | 'object' | 'array'

/** An optional field: absent, `null`, or of `type`. */
const opt = (type: Type, rest: Schema = {}): Schema => ({ type: [type, 'null'], ...rest })
const id = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH }
const optId = opt('string', { minLength: 1, maxLength: MAX_ID_LENGTH })
const optHistory = opt('integer', { minimum: 0, maximum: MAX_HISTORY_LENGTH })
const optStrings = opt('array', { items: { type: 'string' } })
const metadata = opt('object')
// the tenant is a path parameter of the HTTP binding; JSON-RPC clients may still send it
const tenant = opt('string')

/** A part carries exactly one of text, url, raw (base64 bytes) or data (any JSON value). */
const part = {
  // ajv runs oneOf before a type check, and `required` holds of a non-object: the type goes first
  allOf: [
    { type: 'object' },
    { oneOf: [{ required: ['text'] }, { required: ['url'] }, { required: ['raw'] }, { required: ['data'] }] }
  ],
  properties: {
    text: { type: 'string' },
    url: { type: 'string' },
    raw: { type: 'string' },
    mediaType: opt('string'),
    filename: opt('string'),
    metadata
  }
}

const message = {
  type: 'object',
  required: ['messageId', 'role', 'parts'],
  properties: {
    messageId: id,
    // 'user' is the 0.3 spelling; this endpoint is only ever sent the user's side
    role: { enum: ['ROLE_USER', 'user'] },
    parts: { type: 'array', minItems: 1, items: part },
    contextId: optId,
    taskId: optId,
    metadata,
    extensions: optStrings,
    referenceTaskIds: optStrings
  }
}

export const SEND_SCHEMA = {
  type: 'object',
  required: ['message'],
  properties: {
    tenant,
    message,
    configuration: opt('object', {
      properties: {
        acceptedOutputModes: optStrings,
        historyLength: optHistory,
        returnImmediately: opt('boolean'),
        // 0.3 spelled it `blocking: false`
        blocking: opt('boolean'),
        taskPushNotificationConfig: opt('object'),
        pushNotificationConfig: opt('object')
      }
    }),
    metadata
  }
}

export const GET_TASK_SCHEMA = {
  type: 'object',
  required: ['id'],
  properties: { tenant, id, historyLength: optHistory }
}

export const CANCEL_TASK_SCHEMA = {
  type: 'object',
  required: ['id'],
  properties: { tenant, id, metadata }
}

export const SUBSCRIBE_SCHEMA = {
  type: 'object',
  required: ['id'],
  properties: { tenant, id }
}

export const LIST_SCHEMA = {
  type: 'object',
  properties: {
    tenant,
    contextId: optId,
    status: { enum: [...TASK_STATES, 'TASK_STATE_UNSPECIFIED', null] },
    pageSize: opt('integer', { minimum: 1, maximum: LIST_MAX_PAGE_SIZE }),
    pageToken: opt('string', { maxLength: MAX_PAGE_TOKEN_LENGTH }),
    historyLength: optHistory,
    statusTimestampAfter: opt('string'),
    includeArtifacts: opt('boolean')
  }
}
