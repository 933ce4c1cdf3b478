import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { startMcp, openSession, type McpTest } from './helpers.js'

// Last-Event-ID resume of the session dialect's GET notification stream, over real sockets.

interface Ev {
  id: string
  method: string
}

/** One open GET stream: its events as they arrive. */
class Stream {
  readonly events: Ev[] = []
  private buf = ''
  private pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined
  private constructor(
    private readonly ac: AbortController,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>
  ) {}

  static async open(m: McpTest, sid: string, lastEventId?: string): Promise<Stream> {
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-11-25'
    }
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
    const ac = new AbortController()
    const res = await fetch(m.url, { headers, signal: ac.signal })
    if (res.status !== 200) throw new Error(`GET answered ${res.status}`)
    return new Stream(ac, res.body!.getReader())
  }

  /** Reads until `n` events in all have arrived, or `ms` have passed. */
  async until(n: number, ms = 5000): Promise<Ev[]> {
    const deadline = Date.now() + ms
    while (this.events.length < n) {
      const left = deadline - Date.now()
      if (left <= 0) break
      // a read that outlives the wait is kept for the next call, so no chunk is lost
      this.pending ??= this.reader.read()
      const r = await Promise.race([this.pending, sleep(left).then(() => undefined)])
      if (r === undefined) break
      this.pending = undefined
      if (r.done) break
      this.buf += new TextDecoder().decode(r.value)
      let end
      while ((end = this.buf.indexOf('\n\n')) >= 0) {
        const frame = this.buf.slice(0, end)
        this.buf = this.buf.slice(end + 2)
        const id = /^id: (.*)$/m.exec(frame)?.[1]
        const data = /^data: (.*)$/m.exec(frame)?.[1]
        if (data !== undefined) this.events.push({ id: id ?? '', method: JSON.parse(data).method })
      }
    }
    return this.events
  }

  close(): void {
    this.pending?.catch(() => {})
    this.ac.abort()
  }
}

/** Closes the stream and waits until the server has let go of it (so a new GET is not a 409). */
async function disconnect(m: McpTest, sid: string, s: Stream): Promise<void> {
  s.close()
  for (let i = 0; i < 200 && m.mcp.core.sessions.get(sid)?.channel !== undefined; i++) await sleep(10)
}

/** One registry change: three list_changed notifications to every session stream. */
function change(m: McpTest): void {
  m.mcp.registerTool({ name: 'blip', description: 'x', handler: () => 'x' })()
}

const seq = (id: string): number => Number(id.slice(id.lastIndexOf('_') + 1))

t.test('GET stream: events have ids; a reconnect with Last-Event-ID gets exactly the missed ones', async (t) => {
  const m = await startMcp({}, { fixtures: false })
  t.teardown(m.tp.close)
  const s = await openSession(m.url)

  const first = await Stream.open(m, s.sid)
  m.mcp.registerTool({ name: 'one', description: 'x', handler: () => 'x' })
  const seen = await first.until(3)
  t.equal(seen.length, 3)
  t.ok(
    seen.every((e) => /^[0-9a-f]{8}_\d+$/.test(e.id)),
    'every event has an id'
  )
  t.same(
    seen.map((e) => seq(e.id)),
    [0, 1, 2]
  )
  await disconnect(m, s.sid, first)

  // each registry change here is two: register and unregister
  change(m)
  const second = await Stream.open(m, s.sid, seen[2]!.id)
  const missed = await second.until(6)
  t.same(
    missed.map((e) => seq(e.id)),
    [3, 4, 5, 6, 7, 8],
    'the six missed events, in order'
  )
  t.same(
    missed.map((e) => e.method),
    ['tools', 'prompts', 'resources', 'tools', 'prompts', 'resources'].map((k) => `notifications/${k}/list_changed`)
  )
  m.mcp.registerTool({ name: 'two', description: 'x', handler: () => 'x' })
  const all = await second.until(9)
  t.same(
    all.map((e) => seq(e.id)),
    [3, 4, 5, 6, 7, 8, 9, 10, 11],
    'then live events, no duplicates'
  )
  t.equal((await second.until(10, 200)).length, 9, 'nothing more arrives')
  await disconnect(m, s.sid, second)

  // no header, or an id of another stream: no replay, live events only
  change(m)
  for (const header of [undefined, 'deadbeef_3', 'garbage']) {
    const again = await Stream.open(m, s.sid, header)
    m.mcp.registerTool({ name: `live${String(header)}`, description: 'x', handler: () => 'x' })
    const live = await again.until(3)
    t.equal(live.length, 3, `${String(header)}: three live events`)
    t.ok(
      live.every((e) => seq(e.id) > 17),
      `${String(header)}: none of the missed ones replayed`
    )
    await disconnect(m, s.sid, again)
  }
})

t.test('the replay keeps the newest 100 events of a session', async (t) => {
  const m = await startMcp({}, { fixtures: false })
  t.teardown(m.tp.close)
  const s = await openSession(m.url)
  const first = await Stream.open(m, s.sid)
  m.mcp.registerTool({ name: 'one', description: 'x', handler: () => 'x' })
  const seen = await first.until(3)
  await disconnect(m, s.sid, first)
  for (let i = 0; i < 20; i++) change(m) // 120 events
  const second = await Stream.open(m, s.sid, seen[2]!.id)
  const missed = await second.until(100)
  t.equal((await second.until(101, 200)).length, 100, 'bounded: the newest 100')
  t.equal(seq(missed[0]!.id), 23, 'the oldest 20 missed events were dropped')
  t.equal(seq(missed[99]!.id), 122)
  await disconnect(m, s.sid, second)
  // another session's stream is its own: an id from it replays nothing here
  const other = await openSession(m.url)
  const o = await Stream.open(m, other.sid, missed[99]!.id)
  m.mcp.registerTool({ name: 'x2', description: 'x', handler: () => 'x' })
  const live = await o.until(3)
  t.same(
    live.map((e) => seq(e.id)),
    [0, 1, 2],
    'ids are per session stream'
  )
  o.close()
})
