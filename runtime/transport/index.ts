export { Transport, type TransportOptions } from './transport.js'
export { Broadcaster, Resource } from './broadcaster.js'
export { Frame } from './frame.js'
export { ROOM_PATH, roomBroadcasterId } from './rooms.js'
export { RESOURCE_HEADER, TOKEN_HEADER, type EndpointHooks, type EndpointRequest } from './endpoint.js'
export {
  Reason,
  type TransportKind,
  type BroadcasterInfo,
  type ResourceInfo,
  type JoinOptions,
  type RoomJoin,
  type RoomJoinGuard,
  type RoomJoinVerdict
} from './types.js'
export { type MessageRate } from './message-rate.js'
export { TRANSPORT, transportOf } from './key.js'
export { TRANSPORT_ERRORS } from './errors.js'
