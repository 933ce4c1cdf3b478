/**
 * Runs the governed agent turn a task stands for and turns its events into the task: text
 * streams into the task's one artifact, tool calls and agent steps become WORKING status
 * messages, and the turn's end decides the final state (a policy's denial is REJECTED).
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { AiMessage, AiService } from '../ai/index.js'
import type { Artifact } from './a2a-types.js'
import { agentMessage, type LiveTask, type TaskStore } from './task-store.js'

export interface TaskRunDeps {
  ai: AiService
  store: TaskStore
  logger: Logger
}

export interface TaskTurn {
  text: string
  userId?: string
  /** The request's and the message's `metadata`: the client's claims (policies read them as `client.<key>`). */
  clientMetadata?: Record<string, unknown>
  /** The conversation memory key of the task's context: earlier turns of the context are its history. */
  memoryKey: string
}

export async function runTask(d: TaskRunDeps, l: LiveTask, turn: TaskTurn): Promise<void> {
  const { ai, store } = d
  // the record is replaced at every move: `t` is read afresh for what changes, kept for what does not
  const t = l.rec
  if (l.abort.signal.aborted) return
  await store.move(l, 'TASK_STATE_WORKING')
  const sessionId = ai.sessions.open(t.agent, 'a2a')
  ai.sessions.touch(sessionId)
  const artifact: Artifact = { artifactId: randomUUID(), name: 'response', parts: [{ text: '' }] }
  let streamed = false
  try {
    let history: AiMessage[] = []
    try {
      history = await ai.memory.read(turn.memoryKey)
    } catch (err) {
      d.logger.warn({ err, taskId: t.id }, 'A2A task: reading the context history failed; the turn runs without it')
    }
    const events = ai.runTurn(
      {
        agent: t.agent,
        message: turn.text,
        history,
        conversationId: t.contextId,
        sessionId,
        ...(turn.userId !== undefined ? { userId: turn.userId } : {}),
        facts: { a2a: { taskId: t.id, contextId: t.contextId } },
        ...(turn.clientMetadata !== undefined ? { clientMetadata: turn.clientMetadata } : {})
      },
      l.abort.signal
    )
    for await (const e of events) {
      if (e.type === 'text') {
        if (e.delta === '') continue
        artifact.parts[0]!.text += e.delta
        if (!streamed) l.rec.artifacts.push(artifact)
        store.publish(l, {
          artifactUpdate: {
            taskId: t.id,
            contextId: t.contextId,
            artifact: { ...artifact, parts: [{ text: e.delta }] },
            append: streamed,
            lastChunk: false
          }
        })
        streamed = true
      } else if (e.type === 'tool-start')
        await store.move(l, 'TASK_STATE_WORKING', agentMessage(t, `Calling tool ${e.call.name}`))
      else if (e.type === 'agent-step')
        await store.move(l, 'TASK_STATE_WORKING', agentMessage(t, e.description ?? e.name))
      else if (e.type === 'complete') {
        // the final text replaces what streamed: a post-response policy may have changed it
        artifact.parts = [{ text: e.text }]
        if (!streamed) l.rec.artifacts.push(artifact)
        store.publish(l, {
          artifactUpdate: { taskId: t.id, contextId: t.contextId, artifact, append: false, lastChunk: true }
        })
        l.rec.history.push(agentMessage(t, e.text))
        await remember(d, turn.memoryKey, [
          { role: 'user', content: e.userMessage },
          { role: 'assistant', content: e.text }
        ])
        await store.move(l, 'TASK_STATE_COMPLETED')
        return
      } else if (e.type === 'error') {
        if (e.code === 'cancelled') await store.move(l, 'TASK_STATE_CANCELED', agentMessage(t, 'Canceled by request'))
        else if (e.code === 'denied') await store.move(l, 'TASK_STATE_REJECTED', agentMessage(t, e.message))
        else await store.move(l, 'TASK_STATE_FAILED', agentMessage(t, e.message))
        return
      }
    }
    await store.move(l, 'TASK_STATE_FAILED', agentMessage(t, 'the turn ended without a result'))
  } catch (err) {
    d.logger.error({ err, taskId: t.id }, 'A2A task failed')
    await store.move(l, 'TASK_STATE_FAILED', agentMessage(t, 'internal error'))
  } finally {
    ai.sessions.end(sessionId)
  }
}

async function remember(d: TaskRunDeps, key: string, messages: AiMessage[]): Promise<void> {
  try {
    await d.ai.memory.append(key, messages)
  } catch (err) {
    d.logger.warn({ err }, 'A2A task: keeping the turn in the context history failed')
  }
}
