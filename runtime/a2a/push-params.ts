/**
 * The params of the push notification config methods, in both protocol versions, and the configs
 * as each version answers them. 1.0 sends the config flat (`{taskId, id, url, token,
 * authentication: {scheme, credentials}}`) and names the config `id`; 0.3 nests it
 * (`{taskId, pushNotificationConfig: {id, url, token, authentication: {schemes, credentials}}}`),
 * names the task `id` and the config `pushNotificationConfigId`, and a config without an id is the
 * task's own (its id is the task's).
 */
import { randomUUID } from 'node:crypto'
import { LIST_DEFAULT_PAGE_SIZE, LIST_MAX_PAGE_SIZE, MAX_ID_LENGTH, MAX_PAGE_TOKEN_LENGTH } from './params-schema.js'
import type { PushConfig } from './push-configs.js'
import { invalidParams } from './rpc-error.js'

type Obj = Record<string, unknown>

const MAX_TOKEN_LENGTH = 4096
/** An HTTP authentication scheme name (an RFC 9110 token). */
const SCHEME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/
/** What a header value may hold: visible ASCII and spaces, so nothing can end the header early. */
const HEADER_VALUE = /^[\x20-\x7e]*$/

const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x)

function object(params: unknown): Obj {
  if (!isObj(params)) throw invalidParams('params must be an object')
  return params
}

function id(v: unknown, name: string): string {
  if (typeof v !== 'string' || v === '' || v.length > MAX_ID_LENGTH)
    throw invalidParams(`${name} must be a string of 1 to ${MAX_ID_LENGTH} characters`)
  return v
}

function optional<T>(v: unknown, read: (x: unknown) => T): T | undefined {
  return v === undefined || v === null ? undefined : read(v)
}

function headerValue(v: unknown, name: string): string {
  if (typeof v !== 'string' || v === '' || v.length > MAX_TOKEN_LENGTH || !HEADER_VALUE.test(v))
    throw invalidParams(`${name} must be 1 to ${MAX_TOKEN_LENGTH} visible ASCII characters`)
  return v
}

/** A config's own fields, in either version's form: what a create or a SendMessage carries. */
export interface ConfigInput {
  id: string | undefined
  url: string
  token?: string
  authentication?: { scheme: string; credentials: string }
}

export function configInput(c: unknown, where: string): ConfigInput {
  if (!isObj(c)) throw invalidParams(`${where} must be an object`)
  if (typeof c.url !== 'string' || c.url === '') throw invalidParams(`${where}.url must be a non-empty string`)
  const out: ConfigInput = { id: optional(c.id, (v) => id(v, `${where}.id`)), url: c.url }
  const token = optional(c.token, (v) => headerValue(v, `${where}.token`))
  if (token !== undefined) out.token = token
  const auth = c.authentication
  if (auth !== undefined && auth !== null) {
    if (!isObj(auth)) throw invalidParams(`${where}.authentication must be an object`)
    // 1.0 names one scheme; 0.3 lists the schemes the receiver accepts: the first is used
    const scheme = Array.isArray(auth.schemes) ? auth.schemes[0] : auth.scheme
    if (typeof scheme !== 'string' || !SCHEME.test(scheme))
      throw invalidParams(`${where}.authentication needs a scheme (an HTTP authentication scheme such as Bearer)`)
    if (auth.credentials !== undefined && auth.credentials !== null)
      out.authentication = {
        scheme,
        credentials: headerValue(auth.credentials, `${where}.authentication.credentials`)
      }
  }
  return out
}

/** CreateTaskPushNotificationConfig (1.0) or tasks/pushNotificationConfig/set (0.3). */
export function parseCreate(params: unknown, v03: boolean): { taskId: string; config: ConfigInput } {
  const p = object(params)
  const taskId = id(p.taskId, 'taskId')
  if (v03) {
    const config = configInput(p.pushNotificationConfig, 'pushNotificationConfig')
    return { taskId, config: { ...config, id: config.id ?? taskId } }
  }
  const config = configInput(p, 'params')
  return { taskId, config: { ...config, id: config.id ?? randomUUID() } }
}

/** The task and config a get or delete names. */
export function parseConfigRef(params: unknown, v03: boolean): { taskId: string; id: string } {
  const p = object(params)
  if (v03) {
    const taskId = id(p.id, 'id')
    return { taskId, id: optional(p.pushNotificationConfigId, (v) => id(v, 'pushNotificationConfigId')) ?? taskId }
  }
  return { taskId: id(p.taskId, 'taskId'), id: id(p.id, 'id') }
}

export interface ListConfigsParams {
  taskId: string
  pageSize: number
  pageToken?: string
}

/**
 * The task a list names and, in 1.0, the page (`pageSize`, `pageToken`). 0.3's list has no
 * pages: its answer is every config of the task, which `max-configs-per-task` caps at 100.
 */
export function parseListConfigs(params: unknown, v03: boolean): ListConfigsParams {
  const p = object(params)
  if (v03) return { taskId: id(p.id, 'id'), pageSize: LIST_MAX_PAGE_SIZE }
  const out: ListConfigsParams = {
    taskId: id(p.taskId, 'taskId'),
    pageSize:
      optional(p.pageSize, (v) => {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > LIST_MAX_PAGE_SIZE)
          throw invalidParams(`pageSize must be an integer from 1 to ${LIST_MAX_PAGE_SIZE}`)
        return v
      }) ?? LIST_DEFAULT_PAGE_SIZE
  }
  const token = optional(p.pageToken, (v) => {
    if (typeof v !== 'string' || v.length > MAX_PAGE_TOKEN_LENGTH)
      throw invalidParams(`pageToken must be a string of at most ${MAX_PAGE_TOKEN_LENGTH} characters`)
    return v
  })
  if (token !== undefined && token !== '') out.pageToken = token
  return out
}

/** A config as 1.0 answers it. */
export function configJson(c: PushConfig): Obj {
  return {
    taskId: c.taskId,
    id: c.id,
    url: c.url,
    ...(c.token !== undefined ? { token: c.token } : {}),
    ...(c.authentication !== undefined ? { authentication: c.authentication } : {})
  }
}

/** A config as 0.3 answers it: the TaskPushNotificationConfig wrapper. */
export function configJson03(c: PushConfig): Obj {
  return {
    taskId: c.taskId,
    pushNotificationConfig: {
      id: c.id,
      url: c.url,
      ...(c.token !== undefined ? { token: c.token } : {}),
      ...(c.authentication !== undefined
        ? { authentication: { schemes: [c.authentication.scheme], credentials: c.authentication.credentials } }
        : {})
    }
  }
}
