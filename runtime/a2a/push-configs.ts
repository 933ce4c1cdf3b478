/**
 * A2A push notification configs: each on one task, bounded per task and per caller, gone with
 * the task. Every status update of a task with configs, and the last chunk of its answer, is
 * queued in the webhooks area's outbox for each of them: signed, retried, durable. A config
 * created through A2A 0.3 is sent what 0.3 sends (the whole task, in 0.3's shape); one created
 * through 1.0 the StreamResponse event itself.
 */
import type { Logger } from 'pino'
import type { QuotaOwner } from '../http/index.js'
import type { WebhookService } from '../webhooks/index.js'
import type { StreamResponse } from './a2a-types.js'
import { invalidParams } from './rpc-error.js'
import { taskJson, type TaskRecord } from './task-store.js'
import { taskTo03 } from './v03-shapes.js'

/** One config as this server keeps it; `version` is the protocol version that created it. */
export interface PushConfig {
  id: string
  taskId: string
  url: string
  token?: string
  authentication?: { scheme: string; credentials: string }
  version: '1.0' | '0.3'
}

/** One page of a task's configs, in creation order; `nextPageToken` is '' on the last page. */
export interface ConfigPage {
  configs: PushConfig[]
  nextPageToken: string
}

export interface PushLimits {
  perTask: number
  perCaller: number
}

/** Whom a task's configs and deliveries are counted against: its principal, or its anonymous address. */
export function ownerOf(t: TaskRecord): string {
  return callerKey(t.caller)
}

export function callerKey(c: QuotaOwner): string {
  return c.principal !== null ? c.principal : `anonymous ${c.address ?? ''}`
}

export class PushConfigs {
  private readonly byTask = new Map<string, Map<string, PushConfig>>()
  private readonly perCaller = new Map<string, number>()
  /** When each config was created (a replacement keeps its place): what a page token points after. */
  private readonly created = new WeakMap<PushConfig, number>()
  private seq = 0

  constructor(
    private readonly webhooks: WebhookService,
    private readonly limits: PushLimits,
    private readonly logger: Logger
  ) {}

  /** Whether push notifications are offered (the card's capability). */
  get available(): boolean {
    return this.webhooks.ready
  }

  /** The URL as the webhooks area accepts it; throws -32602 naming what is wrong. */
  checkUrl(url: string): string {
    try {
      return this.webhooks.checkUrl(url)
    } catch (err) {
      throw invalidParams((err as Error).message)
    }
  }

  /** Whether a caller (as `callerKey` names it) may add one more config. */
  hasRoom(owner: string): boolean {
    return (this.perCaller.get(owner) ?? 0) < this.limits.perCaller
  }

  /** Adds or replaces a config of `t`; -32602 past a limit, and nothing changes. */
  set(t: TaskRecord, c: Omit<PushConfig, 'taskId'>): PushConfig {
    const configs = this.byTask.get(t.id) ?? new Map<string, PushConfig>()
    const replaces = configs.has(c.id)
    if (!replaces) {
      if (configs.size >= this.limits.perTask)
        throw invalidParams(
          `task ${t.id} has ${configs.size} push notification configs, its limit (platform.a2a.push.max-configs-per-task)`
        )
      const owner = ownerOf(t)
      if ((this.perCaller.get(owner) ?? 0) >= this.limits.perCaller)
        throw invalidParams(
          `the caller keeps ${this.limits.perCaller} push notification configs, its limit (platform.a2a.push.max-configs-per-principal); delete one first`
        )
      this.perCaller.set(owner, (this.perCaller.get(owner) ?? 0) + 1)
    }
    const config: PushConfig = { ...c, taskId: t.id }
    const prior = configs.get(c.id)
    this.created.set(config, prior === undefined ? ++this.seq : this.created.get(prior)!)
    configs.set(c.id, config)
    this.byTask.set(t.id, configs)
    return config
  }

  get(t: TaskRecord, id: string): PushConfig | undefined {
    return this.byTask.get(t.id)?.get(id)
  }

  /**
   * Up to `size` configs of `t` after the one `token` names, in creation order (a Map keeps a
   * replaced key in its place, so that order is the Map's). The token survives the deletion of
   * the config it names: it carries that config's creation number, not its id.
   */
  page(t: TaskRecord, size: number, token?: string): ConfigPage {
    const after = token === undefined ? 0 : parsePageToken(token)
    const configs: PushConfig[] = []
    let more = false
    for (const c of this.byTask.get(t.id)?.values() ?? []) {
      if (this.created.get(c)! <= after) continue
      if (configs.length === size) {
        more = true
        break
      }
      configs.push(c)
    }
    const last = configs.at(-1)
    return {
      configs,
      nextPageToken: more && last !== undefined ? Buffer.from(`c${this.created.get(last)!}`).toString('base64url') : ''
    }
  }

  delete(t: TaskRecord, id: string): boolean {
    const configs = this.byTask.get(t.id)
    if (configs?.delete(id) !== true) return false
    if (configs.size === 0) this.byTask.delete(t.id)
    this.uncount(ownerOf(t), 1)
    return true
  }

  /** The task is forgotten: so are its configs (deliveries already queued still go out). */
  forget(t: TaskRecord): void {
    const configs = this.byTask.get(t.id)
    if (configs === undefined) return
    this.byTask.delete(t.id)
    this.uncount(ownerOf(t), configs.size)
  }

  /** Queues `e` for every config of `t`; a delivery the outbox has no room for is logged and dropped. */
  notify(t: TaskRecord, e: StreamResponse): void {
    const configs = this.byTask.get(t.id)
    if (configs === undefined) return
    // a streamed answer's chunks would be one POST each: a receiver gets the final one, whole
    if ('artifactUpdate' in e && !e.artifactUpdate.lastChunk) return
    for (const c of configs.values()) {
      let body: string
      if (c.version === '1.0') body = JSON.stringify(e)
      else if ('statusUpdate' in e) body = JSON.stringify(taskTo03(taskJson(t)))
      // 0.3 sends the task: its next status update carries the artifact
      else continue
      const headers: Record<string, string> = {}
      if (c.token !== undefined) headers['x-a2a-notification-token'] = c.token
      if (c.authentication !== undefined)
        headers.authorization = `${c.authentication.scheme} ${c.authentication.credentials}`
      this.webhooks
        .enqueue({
          owner: ownerOf(t),
          source: 'a2a',
          ref: t.id,
          queue: `a2a ${t.id} ${c.id}`,
          url: c.url,
          headers,
          body
        })
        .catch((err: unknown) => {
          this.logger.warn({ err, taskId: t.id, config: c.id }, 'A2A push notification dropped')
        })
    }
  }

  private uncount(owner: string, n: number): void {
    const left = (this.perCaller.get(owner) ?? 0) - n
    if (left <= 0) this.perCaller.delete(owner)
    else this.perCaller.set(owner, left)
  }
}

function parsePageToken(token: string): number {
  const m = /^c(\d{1,15})$/.exec(Buffer.from(token, 'base64url').toString())
  if (m === null) throw invalidParams(`pageToken '${token.slice(0, 64)}' is not a token this server gave`)
  return Number(m[1])
}
