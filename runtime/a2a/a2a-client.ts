/**
 * Calling an agent another server hosts, on the official A2A client (`@a2a-js/sdk`): one message as
 * `SendStreamingMessage`, read until the task is terminal. The first event names the task, so a
 * caller that gives up (its signal aborts, or the time runs out) cancels the remote task too.
 */
import { randomUUID } from 'node:crypto'
import { AgentCard, SendMessageRequest, taskStateToJSON, type Artifact, type Part } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
  type Client
} from '@a2a-js/sdk/client'
import { isJsonRpcError } from '@a2a-js/sdk/errors'
import { TASK_STATES, TERMINAL_STATES, type TaskState } from './a2a-types.js'
import { PlatformError, isPlatformError } from '../contracts/index.js'
import { A2A_ERRORS } from './errors.js'

export interface A2aClientOptions {
  /** The agent's JSON-RPC endpoint, e.g. `https://agents.example.com/platform/agent/planner/a2a`. */
  url: string
  /** Sent as `Authorization: Bearer`. */
  token?: string
  /** Bound of the whole exchange, from sending to the terminal state (default 60 000). */
  timeoutMs?: number
}

/** How a remote task ended: its final state and what it said. */
export interface RemoteOutcome {
  taskId: string
  contextId: string
  state: TaskState
  /** The artifacts' text, else the last status message's text. */
  text: string
}

/** A failure talking to the remote agent (transport, protocol or its JSON-RPC error), with a readable message. */
const callFailed = (detail: string, remoteCode?: number): PlatformError =>
  new PlatformError(A2A_ERRORS.A2A_CALL_FAILED, remoteCode === undefined ? { detail } : { detail, remoteCode })

/** How long a caller that gives up waits for the event naming the remote task, to cancel it. */
const FIRST_EVENT_GRACE_MS = 2_000
/** Bound of the `CancelTask` sent when a caller gives up. */
const CANCEL_TIMEOUT_MS = 10_000

const textOf = (parts: Part[]): string =>
  parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('')
const stateOf = (s: ReturnType<typeof taskStateToJSON>): TaskState | undefined =>
  TASK_STATES.find((known) => known === s)

/**
 * `fetch` that rejects a failed HTTP answer which is not a JSON-RPC error with its status and body.
 * The SDK reads any JSON body with an `error` field as a JSON-RPC error, so a server's own error
 * (a router's 404 `{error, code}`, a proxy's page) would reach the caller as "An unexpected error
 * occurred" without its status; a JSON-RPC error is left to the SDK.
 */
function answeredWithStatus(url: string): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init)
    if (res.ok) return res
    const body = await res.clone().text()
    try {
      const rpc = JSON.parse(body) as { jsonrpc?: unknown; error?: { code?: unknown } }
      if (rpc.jsonrpc === '2.0' && typeof rpc.error?.code === 'number') return res
    } catch {
      /* not JSON */
    }
    throw callFailed(`A2A endpoint ${url} answered HTTP ${res.status}: ${body.slice(0, 200)}`)
  }
}

/**
 * The SDK's client for an endpoint URL. What is configured is the JSON-RPC endpoint, not a card, so
 * the card the SDK selects its transport from says just that (fetching the real one would cost a
 * round trip per agent and fail where a server serves no card beside its endpoint). It claims
 * streaming, else the SDK would fall back to a blocking `SendMessage`, which names its task only at the end.
 */
async function sdkClient(url: string, token: string | undefined): Promise<Client> {
  const plain = answeredWithStatus(url)
  const fetchImpl =
    token === undefined
      ? plain
      : createAuthenticatingFetchWithRetry(plain, {
          headers: () => Promise.resolve({ authorization: `Bearer ${token}` }),
          shouldRetryWithHeaders: () => Promise.resolve(undefined)
        })
  const card = AgentCard.fromJSON({
    name: url,
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true }
  })
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })]
    })
  )
  return await factory.createFromAgentCard(card)
}

export class A2aClient {
  private readonly timeoutMs: number
  private client: Promise<Client> | undefined

  constructor(private readonly o: A2aClientOptions) {
    if (!/^https?:\/\//.test(o.url)) throw new TypeError(`A2A endpoint must be an http(s) URL, got '${o.url}'`)
    this.timeoutMs = o.timeoutMs ?? 60_000
  }

  /** Sends one text message and waits for the task it makes to end; rejects with an `A2A_CALL_FAILED` PlatformError. */
  async send(text: string, metadata: Record<string, unknown> = {}, signal?: AbortSignal): Promise<RemoteOutcome> {
    if (signal?.aborted === true) throw callFailed('A2A call cancelled')
    const ac = new AbortController()
    let taskId: string | undefined
    let stopping: 'timeout' | 'cancel' | undefined
    // giving up before the first event named the task would leave the remote task running: wait
    // for that event (bounded) so it can be cancelled, then stop reading
    const stop = (why: 'timeout' | 'cancel'): void => {
      if (stopping !== undefined) return
      stopping = why
      if (taskId !== undefined) ac.abort()
      else setTimeout(() => ac.abort(), FIRST_EVENT_GRACE_MS).unref()
    }
    const timer = setTimeout(() => stop('timeout'), this.timeoutMs)
    const onAbort = (): void => stop('cancel')
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const client = await this.sdk()
      const request = SendMessageRequest.fromJSON({
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], metadata }
      })
      let contextId = ''
      let state: TaskState | undefined
      let status = ''
      const artifacts = new Map<string, Artifact>()
      for await (const event of client.sendMessageStream(request, { signal: ac.signal })) {
        const p = event.payload
        if (p?.$case === 'task') {
          taskId = p.value.id
          contextId = p.value.contextId
          for (const a of p.value.artifacts) artifacts.set(a.artifactId, a)
        } else if (p?.$case === 'statusUpdate') {
          taskId = p.value.taskId
          contextId = p.value.contextId
        } else if (p?.$case === 'artifactUpdate' && p.value.artifact !== undefined) {
          const { artifact, append } = p.value
          const prior = artifacts.get(artifact.artifactId)
          artifacts.set(
            artifact.artifactId,
            append && prior !== undefined ? { ...prior, parts: [...prior.parts, ...artifact.parts] } : artifact
          )
        }
        const s = p?.$case === 'task' || p?.$case === 'statusUpdate' ? p.value.status : undefined
        if (s !== undefined) {
          state = stateOf(taskStateToJSON(s.state)) ?? state
          if (s.message !== undefined) status = textOf(s.message.parts)
        }
        if (stopping !== undefined || (state !== undefined && TERMINAL_STATES.has(state))) break
      }
      if (stopping !== undefined) throw callFailed('stopped')
      if (taskId === undefined || state === undefined || !TERMINAL_STATES.has(state))
        throw callFailed(`A2A stream from ${this.o.url} ended before the task did`)
      const answer = [...artifacts.values()].map((a) => textOf(a.parts)).join('')
      return { taskId, contextId, state, text: answer !== '' ? answer : status }
    } catch (err) {
      if (stopping !== undefined) {
        if (taskId !== undefined) await this.cancel(taskId)
        throw callFailed(
          stopping === 'timeout'
            ? `A2A call to ${this.o.url} timed out after ${this.timeoutMs}ms`
            : 'A2A call cancelled'
        )
      }
      throw this.failure(err)
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      // the stream is done with either way: close its connection rather than leave it to the server
      ac.abort()
    }
  }

  /** Cancels a remote task; a refusal (already terminal, unknown) is not an error here. */
  async cancel(taskId: string): Promise<void> {
    try {
      const client = await this.sdk()
      await client.cancelTask(
        { tenant: '', id: taskId, metadata: undefined },
        { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) }
      )
    } catch {
      /* best effort: the remote task ends on its own */
    }
  }

  private sdk(): Promise<Client> {
    this.client ??= sdkClient(this.o.url, this.o.token)
    return this.client
  }

  /** A JSON-RPC error by its code and message (in a stream the SDK wraps it as the cause); anything else as it came. */
  private failure(err: unknown): PlatformError {
    if (isPlatformError(err, A2A_ERRORS.A2A_CALL_FAILED)) return err
    const rpc = isJsonRpcError(err) ? err : err instanceof Error && isJsonRpcError(err.cause) ? err.cause : undefined
    if (rpc !== undefined) return callFailed(`A2A error ${rpc.envelopeCode}: ${rpc.message}`, rpc.envelopeCode)
    return callFailed(`A2A call to ${this.o.url} failed: ${err instanceof Error ? err.message : String(err)}`)
  }
}
