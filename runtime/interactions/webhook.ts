/**
 * An interaction's `webhook`: called once, at the terminal state, with the final header. The
 * delivery is held in the webhooks area's durable outbox from the create on (before the run
 * starts), and released with its body when the run ends; a process killed in between leaves the
 * hold, and the next start releases it with the header the store kept (a run the crash cut short
 * is FAILED there by then), so an acknowledged webhook is delivered whatever the timing.
 */
import { PlatformError } from '../contracts/index.js'
import { HTTP_ERRORS } from '../http/index.js'
import type { Logger } from '../observability/index.js'
import type { WebhookService } from '../webhooks/index.js'
import type { StepFeed } from './feed.js'
import { headerOf } from './store-input.js'
import { TERMINAL_STATUSES, type InteractionHeader, type InteractionStore } from './types.js'

export const WEBHOOK_SOURCE = 'interactions'

/** What a create's `webhook` may hold. */
export interface WebhookRequest {
  url: string
}

/** The body's `webhook`, shape only (the URL itself is checked by the webhooks area). */
export function parseWebhook(v: unknown): WebhookRequest | undefined {
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'object' || Array.isArray(v))
    throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: "'webhook' must be an object {url}" })
  const w = v as Record<string, unknown>
  for (const k of Object.keys(w))
    if (k !== 'url')
      throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: `unknown key 'webhook.${k}'; the key is url` })
  if (typeof w.url !== 'string' || w.url === '')
    throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: "'webhook.url' must be a non-empty string" })
  return { url: w.url }
}

/** The JSON a webhook POSTs: the Standard Webhooks envelope around the final header. */
export function webhookBody(h: InteractionHeader): string {
  return JSON.stringify({
    type: `interaction.${h.status.toLowerCase()}`,
    timestamp: h.updatedAt,
    data: headerOf(h)
  })
}

/**
 * Checks a create's webhook before anything is written: webhooks on, the URL allowed, the record
 * stored (the delivery outlives the process, and so must what it reports), room in the outbox.
 */
export function checkWebhook(webhooks: WebhookService, w: WebhookRequest, store: boolean): string {
  const url = webhooks.checkUrl(w.url)
  if (!store)
    throw new PlatformError(HTTP_ERRORS.INVALID_BODY, {
      detail: "'webhook' needs store: true (its delivery outlives the process, and so must the record it reports)"
    })
  return url
}

/** Holds the webhook of a new interaction in the outbox; throws the outbox's refusal (429, 503) when it is full. */
export async function holdWebhook(webhooks: WebhookService, header: InteractionHeader, url: string): Promise<string> {
  return await webhooks.hold({ owner: header.userId, source: WEBHOOK_SOURCE, ref: header.id, url })
}

/**
 * Runs `save` for a new record with its webhook (when it has one) held first, so a crash after the
 * save still finds the webhook to deliver; a failed save drops the hold. Resolves with the hold's id.
 */
export async function savedWithWebhook(
  webhooks: WebhookService,
  header: InteractionHeader,
  url: string | undefined,
  save: () => Promise<void>
): Promise<string | undefined> {
  const hook = url === undefined ? undefined : await holdWebhook(webhooks, header, url)
  try {
    await save()
  } catch (err) {
    if (hook !== undefined) await webhooks.drop(hook)
    throw err
  }
  return hook
}

/** Releases the held webhook `id` once the feed tells the run's end (subscribed before the run starts). */
export function releaseAtEnd(
  d: { webhooks: WebhookService; feed: StepFeed; logger: Logger },
  interactionId: string,
  id: string
): void {
  d.feed.subscribe(interactionId, {
    onStep: () => {},
    onTerminal: (final) => {
      d.webhooks.release(id, webhookBody(final)).catch((err: unknown) => {
        // the hold stays: the next start releases it from the stored record
        d.logger.error({ err, interaction: final.id }, 'interaction webhook not released')
      })
    }
  })
}

/**
 * At start-up, after the store marked the runs the last process left as FAILED: releases each
 * webhook that process held with its interaction's stored header, and drops those whose
 * interaction is gone (never saved, or deleted). A run another node still runs keeps its hold.
 */
export async function resumeWebhooks(webhooks: WebhookService, store: InteractionStore, logger: Logger): Promise<void> {
  for (const held of webhooks.held(WEBHOOK_SOURCE)) {
    try {
      const found = await store.load(held.ref)
      if (found === undefined) await webhooks.drop(held.id)
      else if (TERMINAL_STATUSES.has(found.status)) await webhooks.release(held.id, webhookBody(found))
    } catch (err) {
      logger.error({ err, interaction: held.ref }, 'interaction webhook not resumed')
    }
  }
}
