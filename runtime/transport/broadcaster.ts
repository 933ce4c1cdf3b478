import type { Resource } from './resource.js'
import type { WsResource } from './ws-resource.js'
import type { BroadcasterInfo } from './types.js'

/** A counter child prom-client hands out for one label set. */
export interface CounterChild { inc (n?: number): void }

/**
 * A named topic. WebSocket members are subscribers of the uWS topic `topic`, so one `publish`
 * reaches all of them; SSE and long-polling members are written one by one (`direct`).
 */
export class Broadcaster {
  readonly resources = new Map<string, Resource>()
  readonly sockets = new Set<WsResource>()
  readonly direct = new Set<Resource>()
  readonly topic: string
  readonly createdAt = Date.now()
  destroyed = false
  /** Called after a member left (rooms announce it); not called while destroying. */
  onLeave: ((r: Resource, reason: string) => void) | undefined
  /** Destroyed once its last member leaves (rooms). */
  autoDestroy = false

  constructor (readonly id: string, readonly className: string, readonly counter: CounterChild) {
    this.topic = 'broadcaster:' + id
  }

  info (): BroadcasterInfo {
    return { id: this.id, className: this.className, resourceCount: this.resources.size, isDestroyed: this.destroyed }
  }
}
