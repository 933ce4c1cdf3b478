import type { Platform } from '../platform.js'
import { Transport } from './transport.js'
import { installRooms } from './rooms.js'
import type { EndpointSettings } from './endpoint.js'

export { Transport, type TransportOptions } from './transport.js'
export { Broadcaster } from './broadcaster.js'
export { Resource } from './resource.js'
export { Frame } from './frame.js'
export { ROOM_PATH, roomBroadcasterId } from './rooms.js'
export { RESOURCE_HEADER, TOKEN_HEADER, type EndpointHooks, type EndpointRequest, type JoinOptions } from './endpoint.js'
export { Reason, type TransportKind, type BroadcasterInfo, type ResourceInfo, type RoomJoin, type RoomJoinGuard, type RoomJoinVerdict } from './types.js'
export { type MessageRate } from './message-rate.js'

/** The key under which the platform's property bag holds the transport. */
export const TRANSPORT_PROPERTY = 'platform.transport'

/** The transport installed on `platform` (throws when `installTransport` has not run). */
export function transportOf (platform: Platform): Transport {
  const t = platform.properties.get(TRANSPORT_PROPERTY)
  if (!(t instanceof Transport)) throw new Error('transport not installed: call installTransport(platform) first')
  return t
}

/**
 * Broadcasters, connected resources (WebSocket, SSE, long-polling) and the room endpoint
 * `/platform/rooms/{room}`. On shutdown every WebSocket is closed with 1001 and every SSE stream
 * and held poll is ended before the HTTP core waits for in-flight responses.
 */
export async function installTransport (platform: Platform): Promise<void> {
  const c = platform.config
  const heartbeatSeconds = c.get('platform.transport.heartbeat-seconds')
  const maxBackpressureBytes = c.get('platform.transport.max-backpressure-bytes')
  const longPollingTimeoutMs = c.get('platform.transport.long-polling-timeout-seconds') * 1000
  const longPollingQueue = c.get('platform.transport.long-polling-queue')
  const transport = new Transport({
    app: platform.http.app,
    logger: platform.logger,
    metrics: platform.metrics,
    bus: platform.bus,
    maxBackpressureBytes,
    longPollingTimeoutMs,
    longPollingQueue,
    longPollingIdleMs: c.get('platform.transport.long-polling-idle-seconds') * 1000
  })
  const settings: EndpointSettings = {
    http: platform.http,
    transport,
    logger: platform.logger,
    frameLimit: c.get('platform.server.body-limit-bytes'),
    jsonMaxDepth: c.get('platform.server.json-max-depth'),
    // uWS pings an idle socket at about half its idleTimeout and closes it at the full one (min 8 s)
    idleTimeoutSeconds: Math.min(960, Math.max(8, heartbeatSeconds * 2)),
    maxBackpressureBytes,
    longPollingTimeoutMs,
    longPollingQueue
  }
  transport.endpointSettings = settings
  installRooms(settings, {
    auth: c.get('platform.transport.rooms.auth'),
    principalOf: (headers) => platform.principals.fromHeaders(headers),
    guard: () => transport.roomJoinGuard,
    maxMessageBytes: c.get('platform.transport.rooms.max-message-bytes'),
    rate: { perSecond: c.get('platform.transport.rooms.max-messages-per-second'), burst: c.get('platform.transport.rooms.message-burst') }
  })
  platform.http.onShutdown(() => { transport.shutdown() })
  platform.properties.set(TRANSPORT_PROPERTY, transport)
}
