import type { HttpServer } from '../http/index.js'
import type { Logger } from '../observability/index.js'
import type { Broadcaster, Resource } from './broadcaster.js'
import type { Frame } from './frame.js'
import type { SocketWatcher } from './ws-resource.js'
import type { PollOwner } from './long-polling-resource.js'
import type { Reason } from './types.js'

/** What an endpoint needs of the Transport (kept narrow so endpoint.ts does not import it). */
export interface EndpointTransport extends SocketWatcher, PollOwner {
  readonly closing: boolean
  broadcaster(id: string, className?: string): Broadcaster
  resource(uuid: string): Resource | undefined
  add(r: Resource): void
  remove(r: Resource, reason: Reason): void
  end(r: Resource, reason: Reason): void
  publish(b: Broadcaster, frame: Frame, except?: Resource): number
  /** Each installed endpoint adds itself here (path and the class of broadcasters it creates). */
  readonly handlers: { path: string; className: string }[]
}

/** What every endpoint shares; installTransport fills it from configuration. */
export interface EndpointSettings {
  http: HttpServer
  transport: EndpointTransport
  logger: Logger
  /** Largest frame a member may send (platform.server.body-limit-bytes). */
  frameLimit: number
  jsonMaxDepth: number
  /** uWS idleTimeout in seconds; pings go out at about half of it. */
  idleTimeoutSeconds: number
  maxBackpressureBytes: number
  longPollingTimeoutMs: number
  longPollingQueue: number
}
