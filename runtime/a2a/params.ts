/**
 * The params of each A2A method, checked against their JSON Schema before anything is done: a
 * wrong one is -32602 naming the field and the rule, and changes nothing. What a schema cannot
 * say (no text to answer, output modes this agent cannot meet, a timestamp that must parse) is
 * checked after it.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js'
import { compileOnUse } from '../config/index.js'
import type { Message, Part, TaskState } from './a2a-types.js'
import {
  CANCEL_TASK_SCHEMA,
  GET_TASK_SCHEMA,
  LIST_DEFAULT_PAGE_SIZE,
  LIST_SCHEMA,
  SEND_SCHEMA,
  SUBSCRIBE_SCHEMA
} from './params-schema.js'
import { paramsError } from './params-error.js'
import { PlatformError } from '../contracts/index.js'
import { A2A_ERRORS } from './errors.js'
import { invalidParams } from './rpc-error.js'
import { configInput, type ConfigInput } from './push-params.js'

type Obj = Record<string, unknown>

interface RawSend {
  message: Omit<Message, 'role' | 'contextId' | 'taskId' | 'metadata'> & {
    contextId?: string | null
    taskId?: string | null
    metadata?: Obj | null
  }
  configuration?: {
    historyLength?: number | null
    acceptedOutputModes?: string[] | null
    returnImmediately?: boolean | null
    blocking?: boolean | null
    taskPushNotificationConfig?: unknown
    pushNotificationConfig?: unknown
  } | null
  metadata?: Obj | null
}
interface RawTaskId {
  id: string
  historyLength?: number | null
}
interface RawList {
  contextId?: string | null
  status?: TaskState | 'TASK_STATE_UNSPECIFIED' | null
  pageSize?: number | null
  pageToken?: string | null
  historyLength?: number | null
  statusTimestampAfter?: string | null
  includeArtifacts?: boolean | null
}

// verbose: an error carries its schema and value, so a range is named with both its bounds
const OPTIONS = { strict: false, allErrors: false, verbose: true }
const validateSend = compileOnUse<RawSend>(SEND_SCHEMA, OPTIONS)
const validateList = compileOnUse<RawList>(LIST_SCHEMA, OPTIONS)
const validateTaskId = {
  GetTask: compileOnUse<RawTaskId>(GET_TASK_SCHEMA, OPTIONS),
  CancelTask: compileOnUse<RawTaskId>(CANCEL_TASK_SCHEMA, OPTIONS),
  SubscribeToTask: compileOnUse<RawTaskId>(SUBSCRIBE_SCHEMA, OPTIONS)
}

function check<T>(validator: () => ValidateFunction<T>, params: unknown): T {
  const validate = validator()
  if (validate(params)) return params
  throw paramsError(validate.errors)
}

export interface SendParams {
  message: Message
  /** The message's text parts joined by newlines: what the agent's turn is asked. */
  text: string
  historyLength?: number
  returnImmediately: boolean
  metadata?: Obj
  /** A push notification config for the new task (1.0 `taskPushNotificationConfig`, 0.3 `pushNotificationConfig`). */
  push?: ConfigInput
}

/** Output modes a text answer satisfies. */
const TEXT_MODES = new Set(['text/plain', 'text', 'text/*', '*/*'])

export function parseSend(params: unknown): SendParams {
  const p = check(validateSend, params)
  const m = p.message
  const parts: Part[] = m.parts
  const text = parts
    .filter((x) => typeof x.text === 'string')
    .map((x) => x.text)
    .join('\n')
  if (text.trim() === '') {
    if (parts.some((x) => x.text === undefined))
      throw new PlatformError(A2A_ERRORS.A2A_CONTENT_TYPE_NOT_SUPPORTED, {
        detail: 'This agent reads text parts only (defaultInputModes text/plain); the message has none'
      })
    throw invalidParams('message.parts hold no text')
  }
  const message: Message = {
    messageId: m.messageId,
    role: 'ROLE_USER',
    parts,
    ...(m.contextId != null ? { contextId: m.contextId } : {}),
    ...(m.taskId != null ? { taskId: m.taskId } : {}),
    ...(m.metadata != null ? { metadata: m.metadata } : {})
  }
  const cfg = p.configuration ?? {}
  const accepted = cfg.acceptedOutputModes ?? []
  if (accepted.length > 0 && !accepted.some((mode) => TEXT_MODES.has(mode)))
    throw new PlatformError(A2A_ERRORS.A2A_CONTENT_TYPE_NOT_SUPPORTED, {
      detail: `This agent answers text/plain, which configuration.acceptedOutputModes [${accepted.join(', ')}] leaves out`
    })
  const push = cfg.taskPushNotificationConfig ?? cfg.pushNotificationConfig
  return {
    message,
    text,
    ...(push !== undefined && push !== null
      ? { push: configInput(push, 'configuration.taskPushNotificationConfig') }
      : {}),
    returnImmediately: cfg.returnImmediately ?? cfg.blocking === false,
    ...(cfg.historyLength != null ? { historyLength: cfg.historyLength } : {}),
    ...(p.metadata != null ? { metadata: p.metadata } : {})
  }
}

export interface TaskIdParams {
  id: string
  historyLength?: number
}

/** The params of a method on one task: GetTask (which may limit the history), CancelTask, SubscribeToTask. */
export function parseTaskId(params: unknown, method: keyof typeof validateTaskId = 'GetTask'): TaskIdParams {
  const p = check(validateTaskId[method], params)
  return p.historyLength == null ? { id: p.id } : { id: p.id, historyLength: p.historyLength }
}

export interface ListParams {
  contextId?: string
  status?: TaskState
  pageSize: number
  pageToken?: string
  historyLength?: number
  after?: number
  includeArtifacts: boolean
}

export function parseList(params: unknown): ListParams {
  const p = check(validateList, params ?? {})
  const out: ListParams = {
    pageSize: p.pageSize ?? LIST_DEFAULT_PAGE_SIZE,
    includeArtifacts: p.includeArtifacts ?? false
  }
  if (p.contextId != null) out.contextId = p.contextId
  if (p.status != null && p.status !== 'TASK_STATE_UNSPECIFIED') out.status = p.status
  if (p.pageToken != null && p.pageToken !== '') out.pageToken = p.pageToken
  if (p.historyLength != null) out.historyLength = p.historyLength
  if (p.statusTimestampAfter != null) {
    const ms = Date.parse(p.statusTimestampAfter)
    if (Number.isNaN(ms)) throw invalidParams('statusTimestampAfter must be an ISO-8601 timestamp')
    out.after = ms
  }
  return out
}
