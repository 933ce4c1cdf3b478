import type { PlatformEvent } from '../events/index.js'

/** True when `s` needs no escaping: no quote, backslash, control character or surrogate (JSON escapes lone ones). */
function plain(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false
  }
  return true
}

// field names come from the event types: a handful, each quoted once, with and without the comma before
const keys = new Map<string, readonly [first: string, next: string]>()

function jsonKey(k: string, first: boolean): string {
  let q = keys.get(k)
  if (q === undefined) {
    const name = JSON.stringify(k) + ':'
    q = [name, ',' + name]
    if (keys.size < 256) keys.set(k, q)
  }
  return first ? q[0] : q[1]
}

/**
 * Appends `{...event, "node": node, "seq": seq}` as JSON to `out`, piece by piece: the same text JSON.stringify
 * gives with `seq` last, without a second object (the bus's event is shared with other listeners).
 * A batch of events written into one array and joined once becomes one flat string, where
 * concatenating each event's pieces would build a tree of strings per event for the garbage
 * collector to copy and for the join to flatten. Events are flat records of strings, numbers and
 * booleans; anything else in a field goes through JSON.stringify.
 */
export function writeEventJson(out: string[], event: PlatformEvent, seq: number, node: string): void {
  out.push('{')
  let first = true
  for (const key in event) {
    const v = (event as unknown as Record<string, unknown>)[key]
    switch (typeof v) {
      case 'string':
        if (plain(v)) out.push(jsonKey(key, first), '"', v, '"')
        else out.push(jsonKey(key, first), JSON.stringify(v))
        break
      case 'number':
        out.push(jsonKey(key, first), Number.isFinite(v) ? String(v) : 'null')
        break
      case 'boolean':
        out.push(jsonKey(key, first), v ? 'true' : 'false')
        break
      case 'undefined':
      case 'function':
      case 'symbol':
        continue
      default: {
        const json = JSON.stringify(v)
        if (json === undefined) continue
        out.push(jsonKey(key, first), json)
      }
    }
    first = false
  }
  // node ids need no escaping (NODE_ID): the event's node and seq are its place in every node's stream
  out.push(first ? '"node":"' : ',"node":"', node, '","seq":', String(seq), '}')
}

/** One event as JSON (see writeEventJson). */
export function eventJson(event: PlatformEvent, seq: number, node: string): string {
  const out: string[] = []
  writeEventJson(out, event, seq, node)
  return out.join('')
}

/** What one flush sends: the batch's events with each one's node and seq, in stream order. */
export interface Batch {
  events: readonly PlatformEvent[]
  nodes: readonly string[]
  seqs: readonly number[]
}

/** The largest scratch buffer kept between batches; a bigger batch gets a buffer of its own. */
const SCRATCH_KEPT = 1024 * 1024

/** The buffer a caller of wsFrames keeps for it to write each batch into. */
export interface FrameScratch {
  buf: Buffer | undefined
}

/**
 * One WebSocket message per event (clients read one event object a message, as in docs/admin.md): the
 * batch is serialised once into one buffer, and each event's message is a view of it. Event text is
 * nearly always ASCII, where a character is a byte: the views' bounds then come from the pieces'
 * lengths, and the text is measured once, not each piece (a native call per piece, per event).
 * With `scratch` the buffer is the caller's, written again by its next call: allocating one per
 * batch (and collecting it) cost as much as serialising the events. The views are then for sending
 * at once (uWS copies what it sends), not for keeping.
 */
export function wsFrames(batch: Batch, scratch?: FrameScratch): Buffer[] {
  const out: string[] = []
  /** Per event, where its pieces end in `out`, and its text in characters. */
  const pieceEnds: number[] = []
  const ends: number[] = []
  let chars = 0
  for (let i = 0; i < batch.events.length; i++) {
    const from = out.length
    writeEventJson(out, batch.events[i]!, batch.seqs[i]!, batch.nodes[i]!)
    for (let j = from; j < out.length; j++) chars += out[j]!.length
    pieceEnds.push(out.length)
    ends.push(chars)
  }
  // a UTF-16 unit takes at most 3 bytes of UTF-8
  let buf = scratch?.buf
  if (buf === undefined || buf.length < chars * 3) {
    buf = Buffer.allocUnsafeSlow(Math.max(chars * 3, 64 * 1024))
    if (scratch !== undefined && buf.length <= SCRATCH_KEPT) scratch.buf = buf
  }
  const bytes = buf.write(out.join(''), 0)
  if (bytes !== chars) {
    // a character beyond ASCII takes several bytes: measure each event's pieces in bytes instead
    let piece = 0
    let total = 0
    for (let i = 0; i < ends.length; i++) {
      for (; piece < pieceEnds[i]!; piece++) total += Buffer.byteLength(out[piece]!)
      ends[i] = total
    }
  }
  return ends.map((end, i) => buf.subarray(i === 0 ? 0 : ends[i - 1]!, end))
}

/** SSE frames of a batch, `id:` each event's (event JSON holds no newline: one `data:` line each). */
export function sseBatch(batch: Batch, ids: readonly string[]): Buffer {
  const out: string[] = []
  for (let i = 0; i < batch.events.length; i++) {
    out.push('id: ', ids[i]!, '\ndata: ')
    writeEventJson(out, batch.events[i]!, batch.seqs[i]!, batch.nodes[i]!)
    out.push('\n\n')
  }
  return Buffer.from(out.join(''))
}
