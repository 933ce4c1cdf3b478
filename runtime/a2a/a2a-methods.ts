/**
 * The A2A methods on one agent's endpoint. Unary methods return their result; the streaming
 * ones (SendStreamingMessage, SubscribeToTask) write StreamResponse events to a sink, the task
 * first, until the task is terminal. A stream's client going away never cancels the task.
 */
import { createHash, randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { AiService } from '../ai/index.js'
import { TERMINAL_STATES, type StreamResponse } from './a2a-types.js'
import { parseList, parseSend, parseTaskId, type SendParams } from './params.js'
import { PlatformError } from '../contracts/index.js'
import { A2A_ERRORS } from './errors.js'
import { invalidParams, unknownTask } from './rpc-error.js'
import { addressBucket } from '../http/index.js'
import { callerKey, type PushConfigs } from './push-configs.js'
import { configJson, configJson03, parseConfigRef, parseCreate, parseListConfigs } from './push-params.js'
import { runTask } from './task-run.js'
import { taskJson, type TaskRecord, type TaskStore, type Viewer } from './task-store.js'

/** Who calls which agent. */
export interface Caller {
  agent: string
  viewer: Viewer
  /** The principal's name; undefined for an anonymous caller. */
  userId: string | undefined
  /** The client's address: what an anonymous caller's tasks are counted by. */
  address?: string
  /** The request speaks A2A 0.3 (push notification configs keep the version they were made in). */
  v03?: boolean
}

/** Where a streaming method writes; `close` ends the stream. */
export interface EventSink {
  send(e: StreamResponse): void
  close(): void
  onClose(fn: () => void): void
}

export const STREAMING: ReadonlySet<string> = new Set(['SendStreamingMessage', 'SubscribeToTask'])

const PUSH = new Set([
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig'
])

export const METHODS: ReadonlySet<string> = new Set([
  'SendMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'GetExtendedAgentCard',
  ...STREAMING,
  ...PUSH
])

export class A2aMethods {
  constructor(
    private readonly ai: AiService,
    private readonly store: TaskStore,
    private readonly logger: Logger,
    private readonly push: PushConfigs
  ) {}

  async unary(method: string, params: unknown, c: Caller): Promise<unknown> {
    if (PUSH.has(method)) return this.pushMethod(method, params, c)
    switch (method) {
      case 'SendMessage':
        return await this.send(parseSend(params), c)
      case 'GetTask': {
        const p = parseTaskId(params)
        return taskJson(this.task(p.id, c), p.historyLength)
      }
      case 'ListTasks': {
        const p = parseList(params)
        const page = this.store.list({
          agent: c.agent,
          viewer: c.viewer,
          pageSize: p.pageSize,
          ...(p.contextId !== undefined ? { contextId: p.contextId } : {}),
          ...(p.status !== undefined ? { status: p.status } : {}),
          ...(p.after !== undefined ? { after: p.after } : {}),
          ...(p.pageToken !== undefined ? { pageToken: p.pageToken } : {})
        })
        return { ...page, tasks: page.tasks.map((t) => taskJson(t, p.historyLength ?? 0, p.includeArtifacts)) }
      }
      case 'CancelTask': {
        const t = this.task(parseTaskId(params, 'CancelTask').id, c)
        if (!this.store.cancel(t))
          throw new PlatformError(A2A_ERRORS.A2A_TASK_NOT_CANCELABLE, { id: t.id }, { data: { taskId: t.id } })
        return taskJson(t)
      }
      case 'GetExtendedAgentCard':
        throw new PlatformError(A2A_ERRORS.A2A_UNSUPPORTED_OPERATION, {
          detail: 'This agent offers no extended agent card (capabilities.extendedAgentCard is false)'
        })
    }
    throw new PlatformError(A2A_ERRORS.A2A_METHOD_NOT_FOUND, { method })
  }

  /** Checks a streaming call's params and target before any byte is streamed; returns the writer. */
  stream(method: string, params: unknown, c: Caller): (sink: EventSink) => void {
    if (method === 'SendStreamingMessage') {
      const p = parseSend(params)
      const t = this.start(p, c)
      return (sink) => {
        this.follow(t, sink, p.historyLength)
      }
    }
    const t = this.task(parseTaskId(params, 'SubscribeToTask').id, c)
    if (TERMINAL_STATES.has(t.state))
      throw new PlatformError(
        A2A_ERRORS.A2A_UNSUPPORTED_OPERATION,
        { detail: `Task ${t.id} is in a terminal state (${t.state}); nothing to subscribe to` },
        { data: { taskId: t.id } }
      )
    return (sink) => {
      this.follow(t, sink)
    }
  }

  /** The push notification config methods, answered in the caller's protocol version. */
  private pushMethod(method: string, params: unknown, c: Caller): unknown {
    if (!this.push.available) throw new PlatformError(A2A_ERRORS.A2A_PUSH_NOT_SUPPORTED)
    const v03 = c.v03 === true
    const shape = v03 ? configJson03 : configJson
    if (method === 'CreateTaskPushNotificationConfig') {
      const p = parseCreate(params, v03)
      const t = this.task(p.taskId, c)
      const url = this.push.checkUrl(p.config.url)
      return shape(this.push.set(t, { ...p.config, id: p.config.id!, url, version: v03 ? '0.3' : '1.0' }))
    }
    if (method === 'ListTaskPushNotificationConfigs') {
      const p = parseListConfigs(params, v03)
      const page = this.push.page(this.task(p.taskId, c), p.pageSize, p.pageToken)
      return v03
        ? page.configs.map(configJson03)
        : { configs: page.configs.map(configJson), nextPageToken: page.nextPageToken }
    }
    const ref = parseConfigRef(params, v03)
    const t = this.task(ref.taskId, c)
    if (method === 'GetTaskPushNotificationConfig') {
      const found = this.push.get(t, ref.id)
      if (found === undefined) throw unknownConfig(t.id, ref.id)
      return shape(found)
    }
    if (!this.push.delete(t, ref.id)) throw unknownConfig(t.id, ref.id)
    return v03 ? null : {}
  }

  private async send(p: SendParams, c: Caller): Promise<unknown> {
    const t = this.start(p, c)
    if (!p.returnImmediately) await this.store.settled(t)
    return { task: taskJson(t, p.historyLength) }
  }

  /** Creates the task a message asks for and starts its turn. */
  private start(p: SendParams, c: Caller): TaskRecord {
    let contextId = p.message.contextId
    if (p.message.taskId !== undefined) {
      const prior = this.task(p.message.taskId, c)
      if (contextId !== undefined && contextId !== prior.contextId)
        throw invalidParams(`message.contextId '${contextId}' is not the context of task ${prior.id}`)
      // each message runs one turn, so a task takes no second message: a follow-up is a new task in the context
      throw new PlatformError(
        A2A_ERRORS.A2A_UNSUPPORTED_OPERATION,
        {
          detail: TERMINAL_STATES.has(prior.state)
            ? `Task ${prior.id} is in a terminal state (${prior.state}) and accepts no further messages; send the message with its contextId to continue the conversation`
            : `Task ${prior.id} is still ${prior.state}; wait for it or cancel it`
        },
        { data: { taskId: prior.id } }
      )
    }
    // a push config given with the message is checked before the task exists: a refusal changes nothing
    const pushUrl = p.push === undefined ? undefined : this.checkSendPush(p, c)
    const t = this.store.create(c.agent, c.viewer.principal, c.address, contextId, p.message)
    if (p.push !== undefined && pushUrl !== undefined)
      this.push.set(t, {
        ...p.push,
        id: p.push.id ?? (c.v03 === true ? t.id : randomUUID()),
        url: pushUrl,
        version: c.v03 === true ? '0.3' : '1.0'
      })
    if (p.metadata !== undefined) Object.assign(t.metadata, p.metadata)
    contextId = t.contextId
    void runTask({ ai: this.ai, store: this.store, logger: this.logger }, t, {
      text: p.text,
      ...(c.userId !== undefined ? { userId: c.userId } : {}),
      clientMetadata: { ...p.metadata, ...p.message.metadata },
      // anonymous conversations are kept apart by address too: a context id may be one a client chose, and guessable
      memoryKey: memoryKey(c.agent, t.caller.principal ?? `anonymous ${t.caller.address ?? ''}`, contextId)
    })
    return t
  }

  /** Streams a task: its snapshot first, then every update until it is terminal. */
  private follow(t: TaskRecord, sink: EventSink, historyLength?: number): void {
    sink.send({ task: taskJson(t, historyLength) })
    if (TERMINAL_STATES.has(t.state)) {
      sink.close()
      return
    }
    const listener = (e: StreamResponse): void => {
      sink.send(e)
      if ('statusUpdate' in e && TERMINAL_STATES.has(e.statusUpdate.status.state)) sink.close()
    }
    t.listeners.add(listener)
    sink.onClose(() => t.listeners.delete(listener))
  }

  private checkSendPush(p: SendParams, c: Caller): string {
    if (!this.push.available) throw new PlatformError(A2A_ERRORS.A2A_PUSH_NOT_SUPPORTED)
    const url = this.push.checkUrl(p.push!.url)
    const address = c.address === undefined ? undefined : addressBucket(c.address)
    const owner = callerKey(
      c.viewer.principal !== null
        ? { principal: c.viewer.principal }
        : { principal: null, ...(address !== undefined ? { address } : {}) }
    )
    if (!this.push.hasRoom(owner))
      throw invalidParams(
        'the caller keeps its limit of push notification configs (platform.a2a.push.max-configs-per-principal); delete one first'
      )
    return url
  }

  private task(id: string, c: Caller): TaskRecord {
    const t = this.store.visible(id, c.agent, c.viewer)
    if (t === undefined) throw unknownTask(id)
    return t
  }
}

/** One conversation per agent, caller and context; hashed to stay within the memory's key length. */
export function memoryKey(agent: string, owner: string, contextId: string): string {
  return `a2a:${createHash('sha256')
    .update(JSON.stringify([agent, owner, contextId]))
    .digest('hex')
    .slice(0, 40)}`
}

/** A config the task does not have: -32001, as for an unknown task (the A2A SDKs answer it so). */
function unknownConfig(taskId: string, id: string): PlatformError {
  return new PlatformError(
    A2A_ERRORS.A2A_TASK_NOT_FOUND,
    { id: `${taskId} (no push notification config '${id}')` },
    { data: { taskId, configId: id } }
  )
}
