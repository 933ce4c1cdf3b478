import { createHash } from 'node:crypto'
import { availableParallelism, loadavg } from 'node:os'
import { performance, type EventLoopUtilization } from 'node:perf_hooks'
import { NODE_ID, type Backplane } from '../contracts/index.js'

/** The backplane topic every node's heartbeat goes out on. */
export const NODES_TOPIC = 'admin.nodes'
/** Heartbeats a node may miss before the others show it down. */
export const MISSED_BEATS = 3
/** A node not heard for this many periods is forgotten: its row goes. */
const FORGET_BEATS = 600
/** Most other nodes remembered: a heartbeat from one more is ignored. */
const MAX_NODES = 1000
const MAX_TEXT = 200

/** How busy a node is. */
export interface NodeLoad {
  /** The machine's 1-minute load average, and its CPUs to read it against. */
  loadAverage: number
  cpus: number
  /** Share of the last heartbeat period the event loop was busy, 0 to 1. */
  eventLoopUtilization: number
  rssBytes: number
}

/** What a node says of itself in a heartbeat (its id is the backplane's sender, not a field). */
export interface Heartbeat {
  version: string
  startedAt: string
  connections: number
  broadcasters: number
  runsOwned: number
  load: NodeLoad
  /** A digest of its plugin set and policies: nodes behind one load balancer should agree. */
  fingerprint: string
  /** Someone watches the admin event stream there (or did within its linger). */
  watched: boolean
  /** Sent once by a node that stops: the others show it down at once instead of after missed beats. */
  leaving?: true
}

/** One node as `GET /api/admin/cluster` shows it. */
export interface NodeRow extends Omit<Heartbeat, 'leaving' | 'watched'> {
  node: string
  state: 'up' | 'down'
  /** The node that answers. */
  self: boolean
  /** When this node last heard it (its own row: now). */
  lastHeartbeat: string
  /** Its fingerprint is not the one most nodes up share (every node is flagged when no fingerprint has the most). */
  fingerprintDiffers: boolean
}

/** One node's share of the connection and broadcaster counts. */
export type NodeCount = Pick<NodeRow, 'node' | 'state' | 'connections' | 'broadcasters'>

interface Heard {
  beat: Heartbeat
  at: number
}

// the last configuration digested: it changes with a plugin or policy change, not with each heartbeat
let lastText = ''
let lastDigest = ''

/** The digest of a node's plugin set and policies: equal configurations give equal fingerprints. */
export function fingerprintOf(plugins: readonly string[], policies: readonly string[]): string {
  const text = JSON.stringify([[...plugins].sort(), [...policies].sort()])
  if (text !== lastText) {
    lastDigest = createHash('sha256').update(text).digest('hex').slice(0, 16)
    lastText = text
  }
  return lastDigest
}

const text = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_TEXT
const count = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0

/** The heartbeat in `data` when it is one, else undefined: what another node sends is checked field by field. */
function heartbeatOf(data: unknown): Heartbeat | undefined {
  const b = data as Partial<Heartbeat> | null
  if (typeof b !== 'object' || b === null) return undefined
  const l = b.load as Partial<NodeLoad> | undefined
  if (
    !text(b.version) ||
    !text(b.startedAt) ||
    !text(b.fingerprint) ||
    !count(b.connections) ||
    !count(b.broadcasters) ||
    !count(b.runsOwned) ||
    typeof b.watched !== 'boolean' ||
    typeof l !== 'object' ||
    l === null ||
    !count(l.loadAverage) ||
    !count(l.cpus) ||
    !count(l.eventLoopUtilization) ||
    !count(l.rssBytes)
  )
    return undefined
  const beat: Heartbeat = {
    version: b.version,
    startedAt: b.startedAt,
    connections: b.connections,
    broadcasters: b.broadcasters,
    runsOwned: b.runsOwned,
    load: {
      loadAverage: l.loadAverage,
      cpus: l.cpus,
      eventLoopUtilization: l.eventLoopUtilization,
      rssBytes: l.rssBytes
    },
    fingerprint: b.fingerprint,
    watched: b.watched
  }
  if (b.leaving === true) beat.leaving = true
  return beat
}

export interface ClusterNodesOptions {
  node: string
  backplane: Backplane
  periodMs: number
  /** This node's heartbeat, but for its load (measured here) and fingerprint. */
  read: () => Omit<Heartbeat, 'load' | 'leaving' | 'fingerprint'>
  /** This node's fingerprint, computed once per heartbeat (a plugin or policy change shows at the next). */
  fingerprint: () => string
}

/**
 * The nodes of the cluster as this node hears them: each node sends a heartbeat on the backplane
 * every period, and a node missing MISSED_BEATS of them is shown down. A node alone sees itself.
 */
export class ClusterNodes {
  readonly #others = new Map<string, Heard>()
  #elu: EventLoopUtilization = performance.eventLoopUtilization()
  #fingerprint = ''
  #timer: NodeJS.Timeout | undefined
  #off: (() => void) | undefined

  constructor(private readonly opts: ClusterNodesOptions) {}

  start(): void {
    this.#off = this.opts.backplane.subscribe(NODES_TOPIC, (data, from) => {
      this.hear(data, from)
    })
    this.beat()
    this.#timer = setInterval(() => {
      this.beat()
    }, this.opts.periodMs).unref()
  }

  /** Stops beating and tells the others this node is going. */
  stop(): void {
    if (this.#timer === undefined) return
    clearInterval(this.#timer)
    this.#timer = undefined
    this.#off?.()
    this.opts.backplane.publish(NODES_TOPIC, { ...this.own(), leaving: true } satisfies Heartbeat)
  }

  /** This node's heartbeat; `beat` starts the next period's event-loop measure. */
  private own(beat = false): Heartbeat {
    const elu = performance.eventLoopUtilization(this.#elu)
    if (beat) {
      this.#elu = performance.eventLoopUtilization()
      this.#fingerprint = this.opts.fingerprint()
    }
    return {
      ...this.opts.read(),
      fingerprint: this.#fingerprint,
      load: {
        loadAverage: Math.round(loadavg()[0]! * 100) / 100,
        cpus: availableParallelism(),
        eventLoopUtilization: Math.round(elu.utilization * 1000) / 1000,
        rssBytes: process.memoryUsage.rss()
      }
    }
  }

  private beat(): void {
    this.opts.backplane.publish(NODES_TOPIC, this.own(true))
    // forgetting rides on the beat: no second timer
    const now = Date.now()
    for (const [node, h] of this.#others) if (now - h.at > FORGET_BEATS * this.opts.periodMs) this.#others.delete(node)
  }

  private hear(data: unknown, from: string): void {
    if (!NODE_ID.test(from) || from === this.opts.node) return
    const beat = heartbeatOf(data)
    if (beat === undefined) return
    if (!this.#others.has(from) && this.#others.size >= MAX_NODES) return
    this.#others.set(from, { beat, at: Date.now() })
  }

  /**
   * Every node's connection and broadcaster counts, without this node's load figures: the overview
   * reads them on every request, and the load's syscalls (RSS, load average) tripled its CPU.
   */
  counts(): NodeCount[] {
    const now = Date.now()
    const { connections, broadcasters } = this.opts.read()
    const out: NodeCount[] = [{ node: this.opts.node, state: 'up', connections, broadcasters }]
    for (const node of [...this.#others.keys()].sort()) {
      const h = this.#others.get(node)!
      const { connections, broadcasters } = h.beat
      out.push({ node, state: this.up(h, now) ? 'up' : 'down', connections, broadcasters })
    }
    return out
  }

  private up(h: Heard, now: number): boolean {
    return h.beat.leaving !== true && now - h.at <= MISSED_BEATS * this.opts.periodMs
  }

  /** True when another node up says someone watches its admin event stream. */
  watchedElsewhere(): boolean {
    const now = Date.now()
    for (const h of this.#others.values()) if (h.beat.watched && this.up(h, now)) return true
    return false
  }

  /** Every node heard of, this one first, then by id; each flagged when its fingerprint is not the common one. */
  rows(): NodeRow[] {
    const now = Date.now()
    const { watched: _w, leaving: _l, ...self } = this.own()
    const rows: NodeRow[] = [
      {
        node: this.opts.node,
        ...self,
        state: 'up',
        self: true,
        lastHeartbeat: new Date(now).toISOString(),
        fingerprintDiffers: false
      }
    ]
    for (const node of [...this.#others.keys()].sort()) {
      const h = this.#others.get(node)!
      const { leaving: _l, watched: _x, ...beat } = h.beat
      rows.push({
        node,
        ...beat,
        state: this.up(h, now) ? 'up' : 'down',
        self: false,
        lastHeartbeat: new Date(h.at).toISOString(),
        fingerprintDiffers: false
      })
    }
    const common = commonFingerprint(rows.filter((r) => r.state === 'up'))
    for (const r of rows) r.fingerprintDiffers = r.fingerprint !== common
    return rows
  }
}

/** The fingerprint more nodes share than any other, or undefined when two or more tie for it. */
function commonFingerprint(rows: readonly NodeRow[]): string | undefined {
  const counts = new Map<string, number>()
  for (const r of rows) counts.set(r.fingerprint, (counts.get(r.fingerprint) ?? 0) + 1)
  let best: string | undefined
  let most = 0
  let tie = false
  for (const [fp, n] of counts) {
    if (n > most) {
      best = fp
      most = n
      tie = false
    } else if (n === most) tie = true
  }
  return tie ? undefined : best
}
