import type { Area, Platform } from '../platform.js'
import { Transport } from './transport.js'
import { installRooms } from './rooms.js'
import type { EndpointSettings } from './endpoint-settings.js'
import { ROOM_JOIN_GUARD, TRANSPORT } from './key.js'
import { TRANSPORT_CONFIG_KEYS } from './config-keys.js'
import { TRANSPORT_ERRORS } from './errors.js'
import { AddressCap } from './address-cap.js'
import { BACKPLANE } from '../contracts/index.js'

/**
 * Broadcasters, connected resources (WebSocket, SSE, long-polling) and the room endpoint
 * `/platform/rooms/{room}`. On shutdown every WebSocket is closed with 1001 and every SSE stream
 * and held poll is ended before the HTTP core waits for in-flight responses.
 */
export async function installTransport(platform: Platform): Promise<void> {
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
    longPollingIdleMs: c.get('platform.transport.long-polling-idle-seconds') * 1000,
    // only a backplane the cluster area (or an embedding application) added: a node alone relays nothing
    backplane: () => platform.extensions(BACKPLANE)[0]
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
    guard: () => platform.extensions(ROOM_JOIN_GUARD)[0],
    maxMessageBytes: c.get('platform.transport.rooms.max-message-bytes'),
    addressCap: new AddressCap({
      max: c.get('platform.transport.rooms.max-members-per-address'),
      key: 'platform.transport.rooms.max-members-per-address',
      what: 'room members'
    }),
    rate: {
      perSecond: c.get('platform.transport.rooms.max-messages-per-second'),
      burst: c.get('platform.transport.rooms.message-burst')
    }
  })
  platform.http.onShutdown(() => {
    transport.shutdown()
  })
  platform.provide(TRANSPORT, transport)
}

export const transportArea: Area = {
  name: 'transport',
  dependsOn: [],
  configKeys: TRANSPORT_CONFIG_KEYS,
  errors: TRANSPORT_ERRORS,
  install: installTransport
}
