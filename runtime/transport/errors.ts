import { defineErrors } from '../contracts/index.js'

/**
 * The transport area's codes: resources, broadcasters, rooms and their rate limit.
 */
export const TRANSPORT_ERRORS = defineErrors({
  UNKNOWN_RESOURCE: { status: 404, message: (p) => `Unknown resource '${p.uuid}'` },
  UNKNOWN_BROADCASTER: { status: 404, message: (p) => `Unknown broadcaster '${p.id}'` },
  INVALID_ROOM: { status: 400, message: (p) => `Invalid room name '${p.room}': use 1-128 of A-Z a-z 0-9 _ - . :` },
  MISSING_BROADCAST_FIELDS: { status: 400, message: "missing 'broadcasterId' or 'message' field" },
  MISSING_RESOURCE_ID: {
    status: 400,
    message: 'Missing sender resource uuid',
    hint: 'Send the uuid and token from the joined frame as the X-Platform-Resource and X-Platform-Token headers (or the uuid and token query parameters)'
  },
  RESOURCE_FORBIDDEN: {
    status: 403,
    message: (p) => `Not allowed to act as resource '${p.uuid}': missing or wrong token`,
    hint: 'An SSE or long-polling member sends the token from its own joined frame as X-Platform-Token (or the token query parameter); a WebSocket member speaks over its socket only'
  },
  ROOM_AUTH_REQUIRED: {
    status: 401,
    message: (p) => `Room '${p.room}' requires an authenticated principal`,
    hint: 'Send an API token (Authorization: Bearer or X-Platform-Auth) or a JWT; platform.transport.rooms.auth=open lets anyone join'
  },
  ROOM_JOIN_DENIED: { status: 403, message: (p) => `Joining room '${p.room}' denied: ${p.reason}` },
  RATE_LIMITED: {
    status: 429,
    message: (p) => `Too many messages: at most ${p.perSecond} per second (burst ${p.burst})`,
    hint: 'Wait for Retry-After seconds; platform.transport.rooms.max-messages-per-second sets the rate'
  },
  TOO_MANY_CONNECTIONS: {
    status: 429,
    message: (p) => `Too many ${p.what} over ${p.kind} from ${p.address}: at most ${p.max} (${p.key})`,
    hint: 'Close connections this address holds, or raise the limit where many clients share one address'
  },
  INVALID_PRESENCE: {
    status: 400,
    message: (p) => `Invalid presence '${p.value}': use 'true' or 'false'`,
    hint: "Query parameter presence or header X-Platform-Presence; 'false' joins the room without announcing the member"
  }
})
