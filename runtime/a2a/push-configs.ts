/**
 * A2A push notification configs: kept with their task in the task store (bounded per task and per
 * caller, gone with the task), so a config made on any node reaches the node running the task with
 * its next write. Every status update of a task with configs, and the last chunk of its answer, is
 * queued in the webhooks area's outbox for each of them by the node running it: signed, retried,
 * durable. A config created through A2A 0.3 is sent what 0.3 sends (the whole task, in 0.3's
 * shape); one created through 1.0 the StreamResponse event itself.
 */
import type { Logger } from 'pino'
import type { WebhookService } from '../webhooks/index.js'
import type { StreamResponse } from './a2a-types.js'
import { invalidParams } from './rpc-error.js'
import { callerKey, type A2aTaskRecords, type PushConfig, type PushLimits, type TaskRecord } from './task-records.js'
import { taskJson } from './task-store.js'
import { taskTo03 } from './v03-shapes.js'

export { callerKey, type PushConfig, type PushLimits } from './task-records.js'

/** One page of a task's configs, in creation order; `nextPageToken` is '' on the last page. */
export interface ConfigPage {
  configs: PushConfig[]
  nextPageToken: string
}

/** Whom a task's configs and deliveries are counted against: its principal, or its anonymous address. */
export function ownerOf(t: TaskRecord): string {
  return callerKey(t.caller)
}

export class PushConfigs {
  constructor(
    private readonly webhooks: WebhookService,
    private readonly limits: PushLimits,
    private readonly records: A2aTaskRecords,
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
  async hasRoom(owner: string): Promise<boolean> {
    return (await this.records.pushCount(owner)) < this.limits.perCaller
  }

  /** Adds or replaces a config of `t`; -32602 past a limit, and nothing changes. */
  async set(t: TaskRecord, c: Omit<PushConfig, 'taskId'>): Promise<PushConfig | undefined> {
    const kept = await this.records.setPush({ ...c, taskId: t.id })
    // the running node's own view takes it at once; another node's with its next write
    if (kept !== undefined && !t.push.some((p) => p.id === c.id)) t.push = [...t.push, kept]
    else if (kept !== undefined) t.push = t.push.map((p) => (p.id === c.id ? kept : p))
    return kept
  }

  get(t: TaskRecord, id: string): PushConfig | undefined {
    return t.push.find((p) => p.id === id)
  }

  list(t: TaskRecord): PushConfig[] {
    return [...t.push]
  }

  /**
   * Up to `size` configs of `t` after the one `token` names, in creation order (a replaced config
   * keeps its place). The token survives the deletion of the config it names: it carries that
   * config's creation number, not its id.
   */
  page(t: TaskRecord, size: number, token?: string): ConfigPage {
    const after = token === undefined ? 0 : parsePageToken(token)
    const configs: PushConfig[] = []
    let more = false
    for (const c of t.push) {
      if ((c.created ?? 0) <= after) continue
      if (configs.length === size) {
        more = true
        break
      }
      configs.push(c)
    }
    const last = configs.at(-1)
    return {
      configs,
      nextPageToken: more && last !== undefined ? Buffer.from(`c${last.created ?? 0}`).toString('base64url') : ''
    }
  }

  async delete(t: TaskRecord, id: string): Promise<boolean> {
    const done = await this.records.deletePush(t.id, id)
    if (done) t.push = t.push.filter((p) => p.id !== id)
    return done
  }

  /** Queues `e` for every config of `t`; a delivery the outbox has no room for is logged and dropped. */
  notify(t: TaskRecord, e: StreamResponse): void {
    if (t.push.length === 0) return
    // a streamed answer's chunks would be one POST each: a receiver gets the final one, whole
    if ('artifactUpdate' in e && !e.artifactUpdate.lastChunk) return
    for (const c of t.push) {
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
}

function parsePageToken(token: string): number {
  const m = /^c(\d{1,15})$/.exec(Buffer.from(token, 'base64url').toString())
  if (m === null) throw invalidParams(`pageToken '${token.slice(0, 64)}' is not a token this server gave`)
  return Number(m[1])
}
