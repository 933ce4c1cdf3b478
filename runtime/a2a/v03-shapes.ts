/**
 * A2A 0.3 at the edge: the one place that maps 0.3 requests onto the 1.0 methods and their
 * answers back into 0.3 shapes (`kind` discriminators, lower-case states and roles, `kind`ed
 * parts, results without a `{task}` wrapper). The tasks are the 1.0 ones, so a task created
 * through either version is read through the other.
 */
import {
  TERMINAL_STATES,
  type Artifact,
  type Message,
  type Part,
  type StreamResponse,
  type Task,
  type TaskState
} from './a2a-types.js'

type Obj = Record<string, unknown>

/** The 0.3 method names and the 1.0 methods they are. */
export const V03_METHODS: Readonly<Record<string, string>> = {
  'message/send': 'SendMessage',
  'message/stream': 'SendStreamingMessage',
  'tasks/get': 'GetTask',
  'tasks/list': 'ListTasks',
  'tasks/cancel': 'CancelTask',
  'tasks/resubscribe': 'SubscribeToTask',
  'tasks/pushNotificationConfig/set': 'CreateTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/get': 'GetTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/list': 'ListTaskPushNotificationConfigs',
  'tasks/pushNotificationConfig/delete': 'DeleteTaskPushNotificationConfig',
  'agent/getAuthenticatedExtendedCard': 'GetExtendedAgentCard'
}

/** `A2A-Version` values that ask for 0.3 shapes whatever the method is called. */
export const V03_VERSIONS: ReadonlySet<string> = new Set(['0.3', '0.3.0'])

const STATE_03: Record<TaskState, string> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_AUTH_REQUIRED: 'auth-required'
}
const STATE_10 = new Map(Object.entries(STATE_03).map(([k, v]) => [v, k]))

const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x)

/**
 * A 0.3 part as 1.0's. Only a part naming its `kind` is rewritten: anything else is left for the
 * 1.0 schema to judge, so a wrong part is refused there with the field named.
 */
function partTo10(p: unknown): unknown {
  if (!isObj(p) || typeof p.kind !== 'string') return p
  const { kind, metadata } = p
  const meta = isObj(metadata) ? { metadata } : {}
  if (kind === 'text') return { text: p.text, ...meta }
  if (kind === 'data') return { data: p.data, ...meta }
  if (kind === 'file' && isObj(p.file)) {
    const f = p.file
    return {
      ...(typeof f.uri === 'string' ? { url: f.uri } : { raw: f.bytes }),
      ...(typeof f.mimeType === 'string' ? { mediaType: f.mimeType } : {}),
      ...(typeof f.name === 'string' ? { filename: f.name } : {}),
      ...meta
    }
  }
  return p
}

function messageTo10(m: unknown): unknown {
  if (!isObj(m)) return m
  const { kind: _kind, ...rest } = m
  return {
    ...rest,
    ...(typeof m.role === 'string'
      ? { role: m.role === 'user' ? 'ROLE_USER' : m.role === 'agent' ? 'ROLE_AGENT' : m.role }
      : {}),
    ...(Array.isArray(m.parts) ? { parts: m.parts.map(partTo10) } : {})
  }
}

/** A 0.3 request's params as its 1.0 method reads them. */
export function paramsTo10(method: string, params: unknown): unknown {
  if (!isObj(params)) return params
  if (method === 'SendMessage' || method === 'SendStreamingMessage')
    return { ...params, ...('message' in params ? { message: messageTo10(params.message) } : {}) }
  if (method === 'ListTasks' && typeof params.status === 'string')
    return { ...params, status: STATE_10.get(params.status) ?? params.status }
  return params
}

function partTo03(p: Part): Obj {
  const meta = p.metadata !== undefined ? { metadata: p.metadata } : {}
  if (p.text !== undefined) return { kind: 'text', text: p.text, ...meta }
  if (p.data !== undefined) return { kind: 'data', data: p.data, ...meta }
  return {
    kind: 'file',
    file: {
      ...(p.url !== undefined ? { uri: p.url } : { bytes: p.raw }),
      ...(p.mediaType !== undefined ? { mimeType: p.mediaType } : {}),
      ...(p.filename !== undefined ? { name: p.filename } : {})
    },
    ...meta
  }
}

export function messageTo03(m: Message): Obj {
  return {
    kind: 'message',
    ...m,
    role: m.role === 'ROLE_USER' ? 'user' : 'agent',
    parts: m.parts.map(partTo03)
  }
}

function statusTo03(s: Task['status']): Obj {
  return {
    state: STATE_03[s.state],
    ...(s.message !== undefined ? { message: messageTo03(s.message) } : {}),
    timestamp: s.timestamp
  }
}

function artifactTo03(a: Artifact): Obj {
  return { ...a, parts: a.parts.map(partTo03) }
}

export function taskTo03(t: Task): Obj {
  return {
    kind: 'task',
    ...t,
    status: statusTo03(t.status),
    ...(t.artifacts !== undefined ? { artifacts: t.artifacts.map(artifactTo03) } : {}),
    ...(t.history !== undefined ? { history: t.history.map(messageTo03) } : {})
  }
}

/** One stream event as 0.3 has it: the object itself, its `kind` saying which; `final` marks the last status. */
export function eventTo03(e: StreamResponse): Obj {
  if ('task' in e) return taskTo03(e.task)
  if ('message' in e) return messageTo03(e.message)
  if ('statusUpdate' in e) {
    const u = e.statusUpdate
    return {
      kind: 'status-update',
      ...u,
      status: statusTo03(u.status),
      final: TERMINAL_STATES.has(u.status.state)
    }
  }
  return { kind: 'artifact-update', ...e.artifactUpdate, artifact: artifactTo03(e.artifactUpdate.artifact) }
}

/** A unary 1.0 method's result as its 0.3 method answers it. */
export function resultTo03(method: string, result: unknown): unknown {
  if (!isObj(result)) return result
  if (method === 'SendMessage') {
    if (isObj(result.task)) return taskTo03(result.task as unknown as Task)
    if (isObj(result.message)) return messageTo03(result.message as unknown as Message)
    return result
  }
  if (method === 'GetTask' || method === 'CancelTask') return taskTo03(result as unknown as Task)
  if (method === 'ListTasks' && Array.isArray(result.tasks))
    return { ...result, tasks: (result.tasks as Task[]).map(taskTo03) }
  return result
}
