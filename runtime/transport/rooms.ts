import { PlatformError } from '../contracts/index.js'
import type { Principal } from '../auth/index.js'
import { Endpoint } from './endpoint.js'
import type { EndpointRequest } from './endpoint-hooks.js'
import type { EndpointSettings } from './endpoint-settings.js'
import type { Broadcaster, Resource } from './broadcaster.js'
import { Frame } from './frame.js'
import type { MessageRate } from './message-rate.js'
import type { AddressCap } from './address-cap.js'
import type { JoinOptions, RoomJoinGuard } from './types.js'
import { TRANSPORT_ERRORS } from './errors.js'

/** Who may join rooms and how much a member may say (platform.transport.rooms.*). */
export interface RoomPolicy {
  /** `open`: anyone; `required`: a principal must resolve from the request. */
  auth: 'open' | 'required'
  /** The platform's principal resolver, on bare headers. */
  principalOf: (headers: Readonly<Record<string, string>>) => Principal | null
  /** The governance hook, read at each join (it may be set or replaced after start-up). */
  guard: () => RoomJoinGuard | undefined
  maxMessageBytes: number
  rate: MessageRate
  /** Members per client address and transport. */
  addressCap: AddressCap
}

/** Members listed in a `joined` frame; `memberCount` always gives the total. */
export const MEMBER_LIST = 100

export const ROOM_PATH = '/platform/rooms/{room}'
const ROOM_PREFIX = '/platform/rooms/'
const ROOM_NAME = /^[A-Za-z0-9_\-.:]{1,128}$/
/** Query parameter (or header) by which a member joins without being announced. */
const PRESENCE_PARAM = 'presence'
const PRESENCE_HEADER = 'x-platform-presence'

/** The broadcaster id of a room. */
export function roomBroadcasterId(room: string): string {
  return ROOM_PREFIX + room
}

function roomOf(r: Resource): string {
  return r.broadcaster.id.slice(ROOM_PREFIX.length)
}

/**
 * `presence=false` (query, else header): a silent member, whose join and departure are not
 * announced. Large rooms need it: announcing every join to everyone is N²/2 frames to fill a room.
 */
function silentOf(req: EndpointRequest): boolean {
  const v = req.query.get(PRESENCE_PARAM) ?? req.headers[PRESENCE_HEADER]
  if (v === undefined || v === 'true') return false
  if (v === 'false') return true
  throw new PlatformError(TRANSPORT_ERRORS.INVALID_PRESENCE, { value: v.slice(0, 200) })
}

/** The room's access policy for one joining request: auth, then the governance guard. */
function admit(policy: RoomPolicy, req: EndpointRequest): Principal | null {
  const room = req.params.room ?? ''
  const principal = policy.principalOf(req.headers)
  if (principal === null && policy.auth === 'required')
    throw new PlatformError(TRANSPORT_ERRORS.ROOM_AUTH_REQUIRED, { room })
  const guard = policy.guard()
  if (guard !== undefined) {
    const verdict = guard({ room, principal, transport: req.transport ?? 'WEBSOCKET', headers: req.headers })
    if (!verdict.allow) throw new PlatformError(TRANSPORT_ERRORS.ROOM_JOIN_DENIED, { room, reason: verdict.reason })
  }
  return principal
}

/**
 * `/platform/rooms/{room}` on WebSocket, SSE and long-polling. Wire format (docs/transport.md):
 * the joiner gets `joined`, the others `member-joined`; a member's frame reaches every member as
 * `message`; a member's departure reaches the rest as `member-left`; a bad frame earns its sender
 * an `error` frame and nothing else. A member that joins with `presence=false` is silent: its
 * join and departure are not announced (it still gets every frame). A room lives while it has members.
 * Uuids are public; acting as a member takes its socket (WebSocket) or the token that only its own
 * `joined` frame carries (SSE, long-polling).
 */
export function installRooms(settings: EndpointSettings, policy: RoomPolicy): void {
  const t = settings.transport
  new Endpoint(settings, ROOM_PATH, {
    className: 'RoomBroadcaster',

    resolve(req: EndpointRequest): string {
      const name = req.params.room ?? ''
      if (!ROOM_NAME.test(name)) throw new PlatformError(TRANSPORT_ERRORS.INVALID_ROOM, { room: name.slice(0, 200) })
      return roomBroadcasterId(name)
    },

    joinOptions(req: EndpointRequest): JoinOptions {
      const silent = silentOf(req)
      const principal = admit(policy, req)
      return principal === null ? { silent } : { silent, principal: principal.name }
    },

    maxMessageBytes: policy.maxMessageBytes,
    messageRate: policy.rate,
    addressCap: policy.addressCap,

    setup(b: Broadcaster): void {
      b.autoDestroy = true
      // members on every node hear each other: the room subscribes its backplane topic while it has members here
      b.clustered = true
      const room = b.id.slice(ROOM_PREFIX.length)
      b.onLeave = (r, reason) => {
        if (r.silent) return
        t.publish(b, Frame.json(JSON.stringify({ type: 'member-left', room, uuid: r.uuid, reason })))
      }
    },

    joined(r: Resource): void {
      const b = r.broadcaster
      const room = roomOf(r)
      // at most MEMBER_LIST uuids: listing everyone made each join O(n) and a room's joins O(n²) bytes
      const members: string[] = []
      for (const m of b.resources.values()) {
        if (members.length === MEMBER_LIST) break
        members.push(m.uuid)
      }
      // the token goes to this member alone: it is what lets an SSE or long-polling client speak as r
      const joined: Record<string, unknown> = {
        type: 'joined',
        room,
        uuid: r.uuid,
        transport: r.transport,
        members,
        memberCount: b.resources.size
      }
      if (r.token !== undefined) joined.token = r.token
      r.deliver(Frame.json(JSON.stringify(joined)))
      if (!r.silent)
        t.publish(
          b,
          Frame.json(JSON.stringify({ type: 'member-joined', room, uuid: r.uuid, transport: r.transport })),
          r
        )
    },

    /** Every member, the sender included, gets the frame. */
    message(r: Resource, data: unknown): number {
      return t.publish(
        r.broadcaster,
        Frame.json(JSON.stringify({ type: 'message', room: roomOf(r), from: r.uuid, data }))
      )
    }
  }).install()
}
