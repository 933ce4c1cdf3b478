import { PlatformError } from '../contracts/index.js'
import { MCP_ERRORS } from './errors.js'
import type { Session, SessionStorageLimits } from './sessions.js'
import { META_SUBSCRIPTION, isObject, type CallContext, type JsonObject, type Sink } from './types.js'

interface Listener {
  id: string | number
  filter: JsonObject
  sink: Sink
}

/**
 * Change notifications: 2026-07-28 `subscriptions/listen` streams (ack first, filtered, tagged with
 * the listen request's id) and the GET streams of session-dialect sessions.
 */
export class Subscriptions {
  private readonly listeners = new Set<Listener>()

  /** `limits`: a listen stream holds as many resource URIs, as long, as a session may subscribe to. */
  async listen(
    id: string | number,
    p: JsonObject,
    ctx: CallContext,
    limits: Pick<SessionStorageLimits, 'subscriptions' | 'uriBytes'>
  ): Promise<JsonObject> {
    if (ctx.sink.canStream === false)
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_REQUEST, {
        detail: 'subscriptions/listen needs a stream: send Accept: text/event-stream'
      })
    const requested = isObject(p.notifications) ? p.notifications : {}
    const filter: JsonObject = {}
    for (const k of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'])
      if (requested[k] === true) filter[k] = true
    if (Array.isArray(requested.resourceSubscriptions)) {
      const uris = requested.resourceSubscriptions.filter((u) => typeof u === 'string')
      if (uris.length > limits.subscriptions)
        throw new PlatformError(
          MCP_ERRORS.MCP_INVALID_PARAMS,
          {
            detail: `Too many resourceSubscriptions: at most ${limits.subscriptions} (platform.mcp.sessions.max-subscriptions)`
          },
          { data: { limit: limits.subscriptions, key: 'platform.mcp.sessions.max-subscriptions' } }
        )
      if (uris.some((u) => Buffer.byteLength(u) > limits.uriBytes))
        throw new PlatformError(
          MCP_ERRORS.MCP_INVALID_PARAMS,
          {
            detail: `Resource URI too long: the limit is ${limits.uriBytes} bytes (platform.mcp.sessions.max-uri-bytes)`
          },
          { data: { limitBytes: limits.uriBytes, key: 'platform.mcp.sessions.max-uri-bytes' } }
        )
      filter.resourceSubscriptions = uris
    }
    const l: Listener = { id, filter, sink: ctx.sink }
    ctx.sink.notify({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: filter, _meta: { [META_SUBSCRIPTION]: id } }
    })
    this.listeners.add(l)
    try {
      if (!ctx.signal.aborted)
        await new Promise<void>((resolve) => {
          ctx.signal.addEventListener(
            'abort',
            () => {
              resolve()
            },
            { once: true }
          )
        })
    } finally {
      this.listeners.delete(l)
    }
    return { _meta: { [META_SUBSCRIPTION]: id } }
  }

  /** Plugins or registrations changed: list_changed to listen streams (filtered) and session GET streams. */
  changed(sessions: Iterable<Session>): void {
    const kinds: [string, string][] = [
      ['toolsListChanged', 'notifications/tools/list_changed'],
      ['promptsListChanged', 'notifications/prompts/list_changed'],
      ['resourcesListChanged', 'notifications/resources/list_changed']
    ]
    for (const l of this.listeners) {
      for (const [flag, method] of kinds)
        if (l.filter[flag] === true)
          l.sink.notify({ jsonrpc: '2.0', method, params: { _meta: { [META_SUBSCRIPTION]: l.id } } })
      if (Array.isArray(l.filter.resourceSubscriptions))
        for (const uri of l.filter.resourceSubscriptions)
          l.sink.notify({
            jsonrpc: '2.0',
            method: 'notifications/resources/updated',
            params: { uri, _meta: { [META_SUBSCRIPTION]: l.id } }
          })
    }
    for (const s of sessions) {
      // a session whose GET stream may be on another node hears it there (relay)
      if (s.channel === undefined && s.history === undefined && s.relay === undefined) continue
      for (const [, method] of kinds) s.notify({ jsonrpc: '2.0', method })
      for (const uri of s.subscriptions)
        s.notify({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } })
    }
  }
}
