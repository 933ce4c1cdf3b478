/**
 * The params of each A2A method, checked before anything is done: a wrong one is -32602 naming
 * the field, and changes nothing. Unknown fields are ignored, so newer clients still work.
 */
import { TASK_STATES, type Message, type Part, type TaskState } from './a2a-types.js'
import { A2aError, RpcCode, invalidParams } from './rpc-error.js'

export const MAX_ID_LENGTH = 128
export const LIST_DEFAULT_PAGE_SIZE = 50
export const LIST_MAX_PAGE_SIZE = 100

type Obj = Record<string, unknown>

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

function obj(v: unknown, at: string): Obj {
  if (!isObj(v)) throw invalidParams(`${at} must be an object`)
  return v
}

function optStr(o: Obj, k: string, at: string, max = MAX_ID_LENGTH): string | undefined {
  const v = o[k]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string' || v.length === 0 || v.length > max)
    throw invalidParams(`${at}.${k} must be a string of 1 to ${max} characters`)
  return v
}

function reqStr(o: Obj, k: string, at: string): string {
  const v = optStr(o, k, at)
  if (v === undefined) throw invalidParams(`${at}.${k} is required`)
  return v
}

function optInt(o: Obj, k: string, at: string, min: number, max: number): number | undefined {
  const v = o[k]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw invalidParams(`${at}.${k} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`)
  return v
}

function optBool(o: Obj, k: string, at: string): boolean | undefined {
  const v = o[k]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'boolean') throw invalidParams(`${at}.${k} must be a boolean`)
  return v
}

function optMeta(o: Obj, k: string, at: string): Obj | undefined {
  const v = o[k]
  if (v === undefined || v === null) return undefined
  return obj(v, `${at}.${k}`)
}

export interface SendParams {
  message: Message
  /** The message's text parts joined by newlines: what the agent's turn is asked. */
  text: string
  historyLength?: number
  returnImmediately: boolean
  metadata?: Obj
}

const ROLES = new Set(['ROLE_USER', 'user'])
/** Output modes a text answer satisfies. */
const TEXT_MODES = new Set(['text/plain', 'text', 'text/*', '*/*'])

export function parseSend(params: unknown): SendParams {
  const p = obj(params, 'params')
  const m = obj(p.message, 'params.message')
  const at = 'message'
  const messageId = reqStr(m, 'messageId', at)
  if (!ROLES.has(m.role as string))
    throw invalidParams(`message.role must be ROLE_USER, got ${JSON.stringify(m.role ?? null)}`)
  if (!Array.isArray(m.parts) || m.parts.length === 0) throw invalidParams('message.parts must hold at least one part')
  const parts: Part[] = m.parts.map((raw, i) => {
    const part = obj(raw, `message.parts[${i}]`)
    const kinds = ['text', 'url', 'raw', 'data'].filter((k) => part[k] !== undefined)
    if (kinds.length !== 1) throw invalidParams(`message.parts[${i}] must set exactly one of text, url, raw, data`)
    if (part.text !== undefined && typeof part.text !== 'string')
      throw invalidParams(`message.parts[${i}].text must be a string`)
    return part as Part
  })
  const text = parts
    .filter((x) => typeof x.text === 'string')
    .map((x) => x.text)
    .join('\n')
  if (text.trim() === '') {
    if (parts.some((x) => x.text === undefined))
      throw new A2aError(
        RpcCode.ContentTypeNotSupported,
        'This agent reads text parts only (defaultInputModes text/plain); the message has none'
      )
    throw invalidParams('message.parts hold no text')
  }
  const contextId = optStr(m, 'contextId', at)
  const taskId = optStr(m, 'taskId', at)
  const metadata = optMeta(m, 'metadata', at)
  const message: Message = {
    messageId,
    role: 'ROLE_USER',
    parts,
    ...(contextId !== undefined ? { contextId } : {}),
    ...(taskId !== undefined ? { taskId } : {}),
    ...(metadata !== undefined ? { metadata } : {})
  }
  const cfg = p.configuration === undefined || p.configuration === null ? {} : obj(p.configuration, 'configuration')
  const historyLength = optInt(cfg, 'historyLength', 'configuration', 0, 10_000)
  const accepted = cfg.acceptedOutputModes
  if (accepted !== undefined && accepted !== null) {
    if (!Array.isArray(accepted) || accepted.some((m) => typeof m !== 'string'))
      throw invalidParams('configuration.acceptedOutputModes must be a list of media types')
    if (accepted.length > 0 && !accepted.some((m) => TEXT_MODES.has(m as string)))
      throw new A2aError(
        RpcCode.ContentTypeNotSupported,
        `This agent answers text/plain, which configuration.acceptedOutputModes [${accepted.join(', ')}] leaves out`
      )
  }
  // 0.3 spelled it `blocking: false`
  const blocking = optBool(cfg, 'blocking', 'configuration')
  const returnImmediately = optBool(cfg, 'returnImmediately', 'configuration') ?? blocking === false
  const meta = optMeta(p, 'metadata', 'params')
  return {
    message,
    text,
    returnImmediately,
    ...(historyLength !== undefined ? { historyLength } : {}),
    ...(meta !== undefined ? { metadata: meta } : {})
  }
}

export interface TaskIdParams {
  id: string
  historyLength?: number
}

export function parseTaskId(params: unknown): TaskIdParams {
  const p = obj(params, 'params')
  const id = reqStr(p, 'id', 'params')
  const historyLength = optInt(p, 'historyLength', 'params', 0, 10_000)
  return historyLength === undefined ? { id } : { id, historyLength }
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
  const p = params === undefined || params === null ? {} : obj(params, 'params')
  const out: ListParams = {
    pageSize: optInt(p, 'pageSize', 'params', 1, LIST_MAX_PAGE_SIZE) ?? LIST_DEFAULT_PAGE_SIZE,
    includeArtifacts: optBool(p, 'includeArtifacts', 'params') ?? false
  }
  const contextId = optStr(p, 'contextId', 'params')
  if (contextId !== undefined) out.contextId = contextId
  const status = p.status
  if (status !== undefined && status !== null && status !== 'TASK_STATE_UNSPECIFIED') {
    if (!TASK_STATES.includes(status as TaskState))
      throw invalidParams(`params.status must be one of ${TASK_STATES.join(', ')}, got ${JSON.stringify(status)}`)
    out.status = status as TaskState
  }
  const token = p.pageToken
  if (token !== undefined && token !== null && token !== '') {
    if (typeof token !== 'string' || token.length > 256) throw invalidParams('params.pageToken must be a string')
    out.pageToken = token
  }
  const historyLength = optInt(p, 'historyLength', 'params', 0, 10_000)
  if (historyLength !== undefined) out.historyLength = historyLength
  const after = p.statusTimestampAfter
  if (after !== undefined && after !== null) {
    const ms = typeof after === 'string' ? Date.parse(after) : NaN
    if (Number.isNaN(ms)) throw invalidParams('params.statusTimestampAfter must be an ISO-8601 timestamp')
    out.after = ms
  }
  return out
}
