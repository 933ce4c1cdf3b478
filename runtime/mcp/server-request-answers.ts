/**
 * Answers to server requests across nodes. A session-dialect request the server sends a client
 * (elicitation, sampling) waits on the node that sent it, and its id ends with that node
 * (`s-3@node-a`); through a balancer without affinity the client's answer may reach any node, which
 * sends it on the backplane topic of the node its id names: one subscription per node.
 */
import { NODE_ID, type Backplane } from '../contracts/index.js'
import type { Session } from './session.js'

const answerTopic = (node: string): string => `mcp/sessions/answer/${node}`

/** What an answer carries: the session it belongs to, the request's id, and the client's result or error. */
interface Answer {
  id: string
  rid: string
  result?: unknown
  error?: unknown
}

/** Hands this node's answers to the session `find` holds (the caller's unsubscribe is returned). */
export function receiveAnswers(backplane: Backplane, find: (id: string) => Session | undefined): () => void {
  return backplane.subscribe(answerTopic(backplane.node), (data) => {
    const a = data as Partial<Answer> | null
    if (typeof a?.id === 'string' && typeof a.rid === 'string') find(a.id)?.answer(a.rid, a)
  })
}

/**
 * Sends an answer to the node its request id names; an id naming no other node is dropped. The
 * caller has checked that the session is the client's, as for any request.
 */
export function forwardAnswer(
  backplane: Backplane,
  session: string,
  rid: string | number,
  msg: { result?: unknown; error?: unknown }
): void {
  if (typeof rid !== 'string' || !rid.includes('@')) return
  const node = rid.slice(rid.lastIndexOf('@') + 1)
  if (node === backplane.node || !NODE_ID.test(node)) return
  const answer: Answer =
    msg.error !== undefined ? { id: session, rid, error: msg.error } : { id: session, rid, result: msg.result }
  backplane.publish(answerTopic(node), answer)
}
