import { PlatformError } from '../http/index.js'
import { Endpoint, type EndpointSettings, type EndpointRequest } from './endpoint.js'
import type { Broadcaster, Resource } from './broadcaster.js'
import { Frame } from './frame.js'
import type { JoinOptions } from './types.js'

/** Members listed in a `joined` frame; `memberCount` always gives the total. */
export const MEMBER_LIST = 100

export const ROOM_PATH = '/platform/rooms/{room}'
const ROOM_PREFIX = '/platform/rooms/'
const ROOM_NAME = /^[A-Za-z0-9_\-.:]{1,128}$/
/** Query parameter (or header) by which a member joins without being announced. */
const PRESENCE_PARAM = 'presence'
const PRESENCE_HEADER = 'x-platform-presence'
const ANNOUNCED: JoinOptions = {}
const SILENT: JoinOptions = { silent: true }

/** The broadcaster id of a room. */
export function roomBroadcasterId (room: string): string { return ROOM_PREFIX + room }

function roomOf (r: Resource): string { return r.broadcaster.id.slice(ROOM_PREFIX.length) }

/**
 * `presence=false` (query, else header): a silent member, whose join and departure are not
 * announced. Large rooms need it: announcing every join to everyone is N²/2 frames to fill a room.
 */
function presenceOf (req: EndpointRequest): JoinOptions {
  const v = req.query.get(PRESENCE_PARAM) ?? req.headers[PRESENCE_HEADER]
  if (v === undefined || v === 'true') return ANNOUNCED
  if (v === 'false') return SILENT
  throw new PlatformError('INVALID_PRESENCE', { value: v.slice(0, 200) })
}

/**
 * `/platform/rooms/{room}` on WebSocket, SSE and long-polling. Wire format (docs/transport.md):
 * the joiner gets `joined`, the others `member-joined`; a member's frame reaches every member as
 * `message`; a member's departure reaches the rest as `member-left`; a bad frame earns its sender
 * an `error` frame and nothing else. A member that joins with `presence=false` is silent: its
 * join and departure are not announced (it still gets every frame). A room lives while it has members.
 */
export function installRooms (settings: EndpointSettings): void {
  const t = settings.transport
  new Endpoint(settings, ROOM_PATH, {
    className: 'RoomBroadcaster',

    resolve (req: EndpointRequest): string {
      const name = req.params.room ?? ''
      if (!ROOM_NAME.test(name)) throw new PlatformError('INVALID_ROOM', { room: name.slice(0, 200) })
      return roomBroadcasterId(name)
    },

    joinOptions: presenceOf,

    setup (b: Broadcaster): void {
      b.autoDestroy = true
      const room = b.id.slice(ROOM_PREFIX.length)
      b.onLeave = (r, reason) => {
        if (r.silent) return
        t.publish(b, Frame.json(JSON.stringify({ type: 'member-left', room, uuid: r.uuid, reason })))
      }
    },

    joined (r: Resource): void {
      const b = r.broadcaster
      const room = roomOf(r)
      // at most MEMBER_LIST uuids: listing everyone made each join O(n) and a room's joins O(n²) bytes
      const members: string[] = []
      for (const m of b.resources.values()) { if (members.length === MEMBER_LIST) break; members.push(m.uuid) }
      r.deliver(Frame.json(JSON.stringify({ type: 'joined', room, uuid: r.uuid, transport: r.transport, members, memberCount: b.resources.size })))
      if (!r.silent) t.publish(b, Frame.json(JSON.stringify({ type: 'member-joined', room, uuid: r.uuid, transport: r.transport })), r)
    },

    /** Every member, the sender included, gets the frame. */
    message (r: Resource, data: unknown): number {
      return t.publish(r.broadcaster, Frame.json(JSON.stringify({ type: 'message', room: roomOf(r), from: r.uuid, data })))
    }
  }).install()
}
