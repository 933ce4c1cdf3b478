/**
 * The admin event stream's replay window and its cursors. Every event is numbered by the node it
 * happened on (`node`, `seq`), so a cursor is the last seq seen of each node: `node-a:12,node-b:40`.
 * It means the same on every node, which is what lets a subscriber resume on any node of a cluster.
 */
import { NODE_ID, PlatformError } from '../contracts/index.js'
import type { PlatformEvent } from '../events/index.js'
import { HTTP_ERRORS } from '../http/index.js'
import { eventJson } from './event-json.js'

/** Per node, the last seq a subscriber saw. */
export type Cursor = Map<string, number>

/** Most nodes a cursor may name. */
const MAX_CURSOR_NODES = 100
const INTEGER = /^\d{1,15}$/

/**
 * `?after=` or `Last-Event-ID`: a composite cursor (`node-a:12,node-b:40`), or a bare integer that
 * is a seq of `self` (what a node alone has always answered); undefined when absent (the window).
 */
export function parseCursor(raw: string | null | undefined, self: string): Cursor | undefined {
  if (raw === null || raw === undefined || raw === '') return undefined
  if (INTEGER.test(raw)) return new Map([[self, Number(raw)]])
  const parts = raw.split(',')
  const cursor: Cursor = new Map()
  for (const part of parts) {
    const at = part.lastIndexOf(':')
    const node = part.slice(0, at)
    const seq = part.slice(at + 1)
    if (parts.length > MAX_CURSOR_NODES || at < 1 || !NODE_ID.test(node) || !INTEGER.test(seq))
      throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, {
        name: 'after',
        detail: 'must be a seq, or per node `node:seq` joined by commas (at most 100 nodes)'
      })
    cursor.set(node, Number(seq))
  }
  return cursor
}

/** The cursor as text, nodes in id order (a stable `id:` for the same position). */
export function formatCursor(cursor: Cursor): string {
  return [...cursor.keys()]
    .sort()
    .map((n) => `${n}:${String(cursor.get(n))}`)
    .join(',')
}

/** One event of a replay: its place and its JSON. */
export interface Numbered {
  node: string
  seq: number
  json: string
}

/**
 * The last `capacity` events, oldest first, in flat arrays (no object per event): the events
 * themselves, serialised only when a replay asks for them (then kept as JSON).
 */
export class Ring {
  private readonly seqs: number[]
  private readonly nodes: string[]
  private readonly items: (string | PlatformEvent)[]
  private next = 0
  size = 0

  constructor(readonly capacity: number) {
    this.seqs = new Array<number>(capacity).fill(0)
    this.nodes = new Array<string>(capacity).fill('')
    this.items = new Array<string | PlatformEvent>(capacity).fill('')
  }

  push(node: string, seq: number, item: string | PlatformEvent): void {
    if (this.capacity === 0) return
    this.seqs[this.next] = seq
    this.nodes[this.next] = node
    this.items[this.next] = item
    this.next = this.next + 1 === this.capacity ? 0 : this.next + 1
    if (this.size < this.capacity) this.size++
  }

  /**
   * Kept events after `cursor`, oldest first: of each node, those with a seq above the cursor's.
   * `restarted(node, seq)` says whether a cursor's seq beyond what is kept of a node means that node
   * restarted (its numbering starts again): all of its kept events then. No cursor: the whole window.
   */
  since(cursor: Cursor | undefined, restarted: (node: string, seq: number) => boolean): Numbered[] {
    const out: Numbered[] = []
    const start = (this.next - this.size + this.capacity) % Math.max(1, this.capacity)
    const from = new Map<string, number>()
    for (let i = 0; i < this.size; i++) {
      const k = (start + i) % this.capacity
      const seq = this.seqs[k]!
      const node = this.nodes[k]!
      if (cursor !== undefined) {
        let after = from.get(node)
        if (after === undefined) {
          after = cursor.get(node) ?? 0
          if (restarted(node, after)) after = 0
          from.set(node, after)
        }
        if (seq <= after) continue
      }
      let item = this.items[k]!
      if (typeof item !== 'string') this.items[k] = item = eventJson(item, seq, node)
      out.push({ node, seq, json: item })
    }
    return out
  }
}
