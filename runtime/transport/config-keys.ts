/**
 * The configuration keys the transport area (long polling and rooms) owns; `runtime/areas.ts`
 * gathers them with the others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

const { positiveInt } = KEY_SCHEMA

export const TRANSPORT_CONFIG_KEYS = {
  'platform.transport.long-polling-timeout-seconds': {
    schema: positiveInt,
    default: 25,
    description: 'How long a long-polling GET waits for messages before answering empty'
  },
  'platform.transport.long-polling-queue': {
    schema: positiveInt,
    default: 1000,
    description: 'Messages kept for a long-polling client between polls; beyond it the client is disconnected'
  },
  'platform.transport.long-polling-idle-seconds': {
    schema: positiveInt,
    default: 30,
    description: 'A long-polling client with no poll open for this long is disconnected'
  },
  'platform.transport.rooms.auth': {
    schema: { enum: ['open', 'required'] },
    default: 'open',
    description:
      '`open`: anyone may join a room (the demo); `required`: joining needs a principal (an API token or JWT), else 401'
  },
  'platform.transport.rooms.max-members-per-address': {
    schema: positiveInt,
    default: 256,
    description:
      'Room members one client address (IPv6: its /64; loopback too) may hold on each transport at once; a join beyond it gets 429 (a WebSocket upgrade too)'
  },
  'platform.transport.rooms.max-message-bytes': {
    schema: positiveInt,
    default: 65_536,
    description:
      'Largest room message (WebSocket frame or POST body; capped by platform.server.body-limit-bytes): beyond it close 1009 or 413'
  },
  'platform.transport.rooms.max-messages-per-second': {
    schema: { type: 'integer', minimum: 0 },
    default: 20,
    description:
      'Messages a room member may send per second, sustained (0: no limit); beyond it close 1008 on WebSocket, 429 on POST'
  },
  'platform.transport.rooms.message-burst': {
    schema: positiveInt,
    default: 40,
    description: 'Messages a room member may send at once before the per-second rate applies'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof TRANSPORT_CONFIG_KEYS> {}
}
