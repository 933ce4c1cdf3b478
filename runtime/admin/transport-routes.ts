/** Broadcasters, resources, rooms, handlers, protocols and interceptors: the transport as it is now. */
import { PlatformError } from '../contracts/index.js'
import { TOOL_CALL_GATE } from '../contracts/index.js'
import { ROOM_JOIN_GUARD } from '../transport/index.js'
import type { AdminDeps } from './admin-deps.js'
import type { AdminRoute } from './route-table.js'
import { ADMIN_ERRORS } from './errors.js'
import { TRANSPORT_ERRORS } from '../transport/index.js'

const ROOM_CLASS = 'RoomBroadcaster'
const ROOM_PREFIX = '/platform/rooms/'
const str = { type: 'string', minLength: 1 }
const idQuery = { type: 'object', required: ['id'], properties: { id: str } }

/** Anything the caller sent under `key`, as text for an audit target. */
function field(body: unknown, key: string): string {
  if (typeof body !== 'object' || body === null) return ''
  const v = (body as Record<string, unknown>)[key]
  return typeof v === 'string' ? v : ''
}

/** What intercepts traffic now: the governance gates when governance runs, the room join guard when set. */
export function interceptors(d: AdminDeps): { className: string }[] {
  const out: { className: string }[] = []
  if (d.governance !== undefined) out.push({ className: 'PolicyAdmissionGate' })
  if (d.platform.extensions(TOOL_CALL_GATE).length > 0) out.push({ className: 'ToolCallGate' })
  if (d.platform.extensions(ROOM_JOIN_GUARD).length > 0) out.push({ className: 'RoomJoinGuard' })
  return out
}

export function transportRoutes(d: AdminDeps): AdminRoute[] {
  const t = d.transport
  return [
    {
      method: 'GET',
      path: '/broadcasters',
      summary: 'Every broadcaster: {id, className, resourceCount, isDestroyed}',
      gate: { read: 'open' },
      handler: () => t.listBroadcasters()
    },
    {
      method: 'GET',
      path: '/broadcasters/detail',
      summary: 'One broadcaster with its scope and resources',
      gate: { read: 'open' },
      query: idQuery,
      handler: ({ query }) => {
        const id = query.id as string
        const b = t.findBroadcaster(id)
        if (b === undefined) throw new PlatformError(TRANSPORT_ERRORS.UNKNOWN_BROADCASTER, { id })
        return { ...b.info(), scope: 'APPLICATION', resources: [...b.resources.values()].map((r) => r.info()) }
      }
    },
    {
      method: 'POST',
      path: '/broadcasters/broadcast',
      summary: 'Sends a message (a string as is, anything else as JSON) to every member of a broadcaster',
      gate: { write: 'broadcast', target: (r) => field(r.body, 'broadcasterId') },
      body: { type: 'object', required: ['broadcasterId', 'message'], properties: { broadcasterId: str } },
      invalidBody: () => new PlatformError(TRANSPORT_ERRORS.MISSING_BROADCAST_FIELDS),
      handler: ({ body }) => {
        const b = body as { broadcasterId: string; message: unknown }
        t.broadcast(b.broadcasterId, b.message)
        return { status: 'broadcast sent' }
      }
    },
    {
      method: 'POST',
      path: '/broadcasters/unicast',
      summary: 'Sends a message to one resource of a broadcaster',
      gate: { write: 'unicast', target: (r) => field(r.body, 'uuid') },
      body: {
        type: 'object',
        required: ['broadcasterId', 'uuid', 'message'],
        properties: { broadcasterId: str, uuid: str }
      },
      invalidBody: () => new PlatformError(ADMIN_ERRORS.MISSING_UNICAST_FIELDS),
      handler: ({ body }) => {
        const b = body as { broadcasterId: string; uuid: string; message: unknown }
        const bc = t.findBroadcaster(b.broadcasterId)
        if (bc === undefined || bc.destroyed)
          throw new PlatformError(TRANSPORT_ERRORS.UNKNOWN_BROADCASTER, { id: b.broadcasterId })
        if (!bc.resources.has(b.uuid)) throw new PlatformError(TRANSPORT_ERRORS.UNKNOWN_RESOURCE, { uuid: b.uuid })
        t.unicast(b.uuid, b.message)
        return { status: 'unicast sent' }
      }
    },
    {
      method: 'DELETE',
      path: '/broadcasters/destroy',
      summary: 'Disconnects every member of a broadcaster and removes it',
      gate: { write: 'destroy_broadcaster', target: (r) => r.ctx.query.get('id') ?? '' },
      query: idQuery,
      handler: ({ query }) => {
        const id = query.id as string
        if (!t.destroyBroadcaster(id)) throw new PlatformError(TRANSPORT_ERRORS.UNKNOWN_BROADCASTER, { id })
        return { status: 'broadcaster destroyed' }
      }
    },
    {
      method: 'GET',
      path: '/resources',
      summary:
        "Every resource connected to this node: {uuid, transport, isSuspended, isResumed, broadcaster, node} (every node's counts: /resources/counts)",
      gate: { read: 'open' },
      query: { type: 'object', properties: { broadcaster: str } },
      handler: ({ query }) => {
        const node = d.platform.node.id
        return t.listResources(query.broadcaster as string | undefined).map((r) => ({ ...r, node }))
      }
    },
    {
      method: 'DELETE',
      path: '/resources/{uuid}',
      summary: 'Closes a connected resource from the server side',
      gate: { write: 'disconnect', target: (r) => r.params.uuid ?? '' },
      handler: ({ params }) => {
        const uuid = params.uuid!
        if (!t.disconnect(uuid)) throw new PlatformError(TRANSPORT_ERRORS.UNKNOWN_RESOURCE, { uuid })
        return { status: 'resource disconnected' }
      }
    },
    {
      method: 'POST',
      path: '/resources/{uuid}/resume',
      summary: "Answers a long-polling resource's held poll now",
      gate: { write: 'resume', target: (r) => r.params.uuid ?? '' },
      handler: ({ params }) => {
        const uuid = params.uuid!
        const r = t.resource(uuid)
        if (r === undefined) throw new PlatformError(TRANSPORT_ERRORS.UNKNOWN_RESOURCE, { uuid })
        if (!r.resume()) throw new PlatformError(ADMIN_ERRORS.RESOURCE_NOT_RESUMABLE, { uuid, transport: r.transport })
        return { status: 'resource resumed' }
      }
    },
    {
      method: 'GET',
      path: '/rooms',
      summary: 'Every room with its members, their transports and principals',
      // who is in which room is content, like the conversations: the content read gate applies
      gate: { read: 'content' },
      handler: () => {
        const rooms: Record<string, unknown>[] = []
        for (const info of t.listBroadcasters()) {
          if (info.className !== ROOM_CLASS) continue
          const b = t.findBroadcaster(info.id)!
          rooms.push({
            room: info.id.slice(ROOM_PREFIX.length),
            broadcaster: info.id,
            memberCount: b.resources.size,
            members: [...b.resources.values()].map((r) => ({
              uuid: r.uuid,
              transport: r.transport,
              silent: r.silent,
              principal: r.principal ?? null,
              connectedAt: new Date(r.connectedAt).toISOString()
            }))
          })
        }
        return rooms
      }
    },
    {
      method: 'GET',
      path: '/handlers',
      summary: 'The endpoints served on WebSocket, SSE and long-polling: {path, className}',
      gate: { read: 'open' },
      handler: () => t.handlers.map((h) => ({ path: h.path, className: h.className }))
    },
    {
      method: 'GET',
      path: '/protocols',
      summary: 'The wire protocols: {name, kind, active, className}',
      gate: { read: 'open' },
      handler: () => [
        { name: 'websocket', kind: 'WIRE', active: true, className: 'WsResource' },
        { name: 'sse', kind: 'WIRE', active: true, className: 'SseResource' },
        { name: 'long-polling', kind: 'WIRE', active: true, className: 'LongPollingResource' },
        { name: 'mcp', kind: 'WIRE', active: d.mcp !== undefined, className: 'McpServer' }
      ]
    },
    {
      method: 'GET',
      path: '/interceptors',
      summary: 'What intercepts requests now: {className}',
      gate: { read: 'open' },
      handler: () => interceptors(d)
    }
  ]
}
