/**
 * A small A2A 1.0 JSON-RPC client for calling an agent another server hosts: one message as
 * `SendStreamingMessage`, read until the task is terminal. The first event names the task, so a
 * caller that gives up (its signal aborts, or the time runs out) cancels the remote task too.
 */
import { randomUUID } from 'node:crypto'
import { TERMINAL_STATES, type Artifact, type Message, type Task, type TaskState } from './a2a-types.js'

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

/** A failure talking to the remote agent (transport, protocol or JSON-RPC error), with a readable message. */
export class A2aCallError extends Error {
  constructor(
    message: string,
    readonly code?: number
  ) {
    super(message)
    this.name = 'A2aCallError'
  }
}

/** How long a caller that gives up waits for the event naming the remote task, to cancel it. */
const FIRST_EVENT_GRACE_MS = 2_000

const textOf = (parts: { text?: string }[] | undefined): string => (parts ?? []).map((p) => p.text ?? '').join('')

export class A2aClient {
  private seq = 0
  private readonly timeoutMs: number

  constructor(private readonly o: A2aClientOptions) {
    if (!/^https?:\/\//.test(o.url)) throw new TypeError(`A2A endpoint must be an http(s) URL, got '${o.url}'`)
    this.timeoutMs = o.timeoutMs ?? 60_000
  }

  /** Sends one text message and waits for the task it makes to end; rejects with A2aCallError. */
  async send(text: string, metadata: Record<string, unknown> = {}, signal?: AbortSignal): Promise<RemoteOutcome> {
    if (signal?.aborted === true) throw new A2aCallError('A2A call cancelled')
    const ac = new AbortController()
    let task: Task | undefined
    let stopping: 'timeout' | 'cancel' | undefined
    // giving up before the first event named the task would leave the remote task running: wait
    // for that event (bounded) so it can be cancelled, then stop reading
    const stop = (why: 'timeout' | 'cancel'): void => {
      if (stopping !== undefined) return
      stopping = why
      if (task !== undefined) ac.abort()
      else setTimeout(() => ac.abort(), FIRST_EVENT_GRACE_MS).unref()
    }
    const timer = setTimeout(() => stop('timeout'), this.timeoutMs)
    const onAbort = (): void => stop('cancel')
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const message: Message = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], metadata }
      const res = await this.post('SendStreamingMessage', { message }, ac.signal, 'text/event-stream')
      if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) throw await this.failure(res)
      let state: TaskState | undefined
      let status = ''
      const artifacts = new Map<string, Artifact>()
      for await (const result of events(res)) {
        if (result.task !== undefined) {
          task = result.task as Task
          state = task.status.state
          for (const a of task.artifacts ?? []) artifacts.set(a.artifactId, a)
        } else if (result.statusUpdate !== undefined) {
          const u = result.statusUpdate as { status: Task['status'] }
          state = u.status.state
          if (u.status.message !== undefined) status = textOf(u.status.message.parts)
        } else if (result.artifactUpdate !== undefined) {
          const u = result.artifactUpdate as { artifact: Artifact; append?: boolean }
          const prior = artifacts.get(u.artifact.artifactId)
          artifacts.set(
            u.artifact.artifactId,
            u.append === true && prior !== undefined
              ? { ...prior, parts: [...prior.parts, ...u.artifact.parts] }
              : u.artifact
          )
        }
        if (stopping !== undefined || (state !== undefined && TERMINAL_STATES.has(state))) break
      }
      if (stopping !== undefined) throw new A2aCallError('stopped')
      if (task === undefined || state === undefined || !TERMINAL_STATES.has(state))
        throw new A2aCallError(`A2A stream from ${this.o.url} ended before the task did`)
      const answer = [...artifacts.values()].map((a) => textOf(a.parts)).join('')
      return { taskId: task.id, contextId: task.contextId, state, text: answer !== '' ? answer : status }
    } catch (err) {
      if (stopping !== undefined) {
        if (task !== undefined) await this.cancel(task.id)
        throw new A2aCallError(
          stopping === 'timeout'
            ? `A2A call to ${this.o.url} timed out after ${this.timeoutMs}ms`
            : 'A2A call cancelled'
        )
      }
      if (err instanceof A2aCallError) throw err
      throw new A2aCallError(`A2A call to ${this.o.url} failed: ${(err as Error).message}`)
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
  }

  /** Cancels a remote task; a refusal (already terminal, unknown) is not an error here. */
  async cancel(taskId: string): Promise<void> {
    try {
      const res = await this.post('CancelTask', { id: taskId }, AbortSignal.timeout(10_000), 'application/json')
      await res.body?.cancel()
    } catch {
      /* best effort: the remote task ends on its own */
    }
  }

  private async post(method: string, params: unknown, signal: AbortSignal, accept: string): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept, 'a2a-version': '1.0' }
    if (this.o.token !== undefined) headers.authorization = `Bearer ${this.o.token}`
    return await fetch(this.o.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: ++this.seq, method, params }),
      signal
    })
  }

  private async failure(res: Response): Promise<A2aCallError> {
    const text = await res.text()
    try {
      const body = JSON.parse(text) as { error?: { code?: number; message?: string } }
      // a JSON-RPC error; a server's own error body (a 404 page, a proxy's) is reported with its status below
      if (typeof body.error === 'object' && body.error !== null)
        return new A2aCallError(`A2A error ${body.error.code}: ${body.error.message}`, body.error.code)
    } catch {
      /* not JSON */
    }
    return new A2aCallError(`A2A endpoint ${this.o.url} answered HTTP ${res.status}: ${text.slice(0, 200)}`)
  }
}

/** The `result` of each SSE event; a JSON-RPC error in the stream rejects. */
async function* events(res: Response): AsyncGenerator<Record<string, unknown>> {
  if (res.body === null) return
  const dec = new TextDecoder()
  let buf = ''
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += dec.decode(chunk, { stream: true })
    let i
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i)
      buf = buf.slice(i + 2)
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n')
      if (data === '') continue
      const msg = JSON.parse(data) as { result?: Record<string, unknown>; error?: { code: number; message: string } }
      if (msg.error !== undefined)
        throw new A2aCallError(`A2A error ${msg.error.code}: ${msg.error.message}`, msg.error.code)
      if (msg.result !== undefined) yield msg.result
    }
  }
}
