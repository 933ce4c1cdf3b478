/**
 * The last hour of the platform in per-minute buckets, in memory, for the dashboard's charts: turns,
 * turn latency (p50, p95), tokens, denials and errors from `TurnCompleted`, and the connections and
 * active sessions as they stood. Bounded: sixty buckets of fixed size, and per agent one set of
 * totals with a latency histogram, at most MAX_AGENTS of them (the rest count as one).
 */
import type { Platform } from '../platform.js'
import type { PlatformEvent } from '../events/index.js'

const MINUTE_MS = 60_000
export const HISTORY_MINUTES = 60
const MAX_AGENTS = 2000
const OTHER_AGENTS = '(other agents)'
// latency buckets grow by 15%: a percentile is read to within that, from a fixed 100 counters
const GROWTH = 1.15
const LATENCY_BUCKETS = 100

function latencyBucket(ms: number): number {
  if (!(ms > 1)) return 0
  return Math.min(LATENCY_BUCKETS - 1, Math.ceil(Math.log(ms) / Math.log(GROWTH)))
}

/** The upper bound (ms) of the histogram bucket holding the `q` quantile; null when empty. */
function quantile(counts: Uint32Array, total: number, q: number): number | null {
  if (total === 0) return null
  const rank = Math.ceil(q * total)
  let seen = 0
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!
    if (seen >= rank) return Math.round(GROWTH ** i)
  }
  return Math.round(GROWTH ** (counts.length - 1))
}

interface Bucket {
  minute: number
  turns: number
  errors: number
  denials: number
  tokens: number
  latency: Uint32Array
  /** The gauges as last seen in this minute; -1: not seen. */
  connections: number
  sessions: number
}

interface AgentTotals {
  turns: number
  errors: number
  latency: Uint32Array
}

export interface HistoryPoint {
  /** The minute's start, ISO 8601. */
  t: string
  turns: number
  errors: number
  denials: number
  tokensPerSecond: number
  p50: number | null
  p95: number | null
  connections: number
  sessions: number
}

export interface MetricsHistory {
  minutes: number
  points: HistoryPoint[]
  /** Since start-up, per agent: turns, turns that ended in error or denial, p95 latency (ms). */
  agents: Record<string, { turns: number; errors: number; p95: number | null }>
}

export class MetricsHistoryRecorder {
  private readonly buckets: Bucket[] = []
  private readonly agents = new Map<string, AgentTotals>()

  constructor(
    private readonly gauges: () => { connections: number; sessions: number },
    private readonly now: () => number = Date.now
  ) {
    for (let i = 0; i < HISTORY_MINUTES; i++)
      this.buckets.push({
        minute: -1,
        turns: 0,
        errors: 0,
        denials: 0,
        tokens: 0,
        latency: new Uint32Array(LATENCY_BUCKETS),
        connections: -1,
        sessions: -1
      })
  }

  /** Follows the bus: turns as they end, and the gauges whenever a connection or session comes or goes. */
  follow(platform: Platform): () => void {
    const offs = [
      platform.bus.on('TurnCompleted', (e) => this.turn(e)),
      ...(['ResourceConnected', 'ResourceDisconnected', 'AgentSessionStarted', 'AgentSessionEnded'] as const).map(
        (type) => platform.bus.on(type, () => this.sample())
      )
    ]
    return () => offs.forEach((off) => off())
  }

  private bucket(): Bucket {
    const minute = Math.floor(this.now() / MINUTE_MS)
    const b = this.buckets[minute % HISTORY_MINUTES]!
    if (b.minute !== minute) {
      b.minute = minute
      b.turns = b.errors = b.denials = b.tokens = 0
      b.latency.fill(0)
      b.connections = b.sessions = -1
    }
    return b
  }

  turn(e: PlatformEvent<'TurnCompleted'>): void {
    const b = this.bucket()
    const failed = e.outcome === 'error' || e.outcome === 'denied'
    b.turns++
    if (e.outcome === 'error') b.errors++
    if (e.outcome === 'denied') b.denials++
    b.tokens += e.inputTokens + e.outputTokens
    const slot = latencyBucket(e.duration)
    b.latency[slot]!++
    let a = this.agents.get(e.agentName)
    if (a === undefined) {
      const name = this.agents.size < MAX_AGENTS ? e.agentName : OTHER_AGENTS
      a = this.agents.get(name) ?? { turns: 0, errors: 0, latency: new Uint32Array(LATENCY_BUCKETS) }
      this.agents.set(name, a)
    }
    a.turns++
    if (failed) a.errors++
    a.latency[slot]!++
  }

  sample(): void {
    const b = this.bucket()
    const g = this.gauges()
    b.connections = g.connections
    b.sessions = g.sessions
  }

  /** The last hour, oldest minute first; a minute with no gauge reading carries the one before. */
  read(): MetricsHistory {
    this.sample()
    const current = Math.floor(this.now() / MINUTE_MS)
    const points: HistoryPoint[] = []
    let connections = 0
    let sessions = 0
    // the first reading of the window stands for the minutes before it
    for (let m = current - HISTORY_MINUTES + 1; m <= current; m++) {
      const b = this.buckets[m % HISTORY_MINUTES]!
      if (b.minute === m && b.connections >= 0) {
        connections = b.connections
        sessions = b.sessions
        break
      }
    }
    for (let m = current - HISTORY_MINUTES + 1; m <= current; m++) {
      const b = this.buckets[m % HISTORY_MINUTES]!
      const live = b.minute === m
      if (live && b.connections >= 0) {
        connections = b.connections
        sessions = b.sessions
      }
      const turns = live ? b.turns : 0
      // the minute in progress is divided by the seconds it has had, not by sixty
      const seconds = m === current ? Math.max(1, (this.now() - m * MINUTE_MS) / 1000) : 60
      points.push({
        t: new Date(m * MINUTE_MS).toISOString(),
        turns,
        errors: live ? b.errors : 0,
        denials: live ? b.denials : 0,
        tokensPerSecond: live ? Math.round((b.tokens / seconds) * 100) / 100 : 0,
        p50: live ? quantile(b.latency, turns, 0.5) : null,
        p95: live ? quantile(b.latency, turns, 0.95) : null,
        connections,
        sessions
      })
    }
    const agents: MetricsHistory['agents'] = {}
    for (const [name, a] of this.agents)
      agents[name] = { turns: a.turns, errors: a.errors, p95: quantile(a.latency, a.turns, 0.95) }
    return { minutes: HISTORY_MINUTES, points, agents }
  }
}
