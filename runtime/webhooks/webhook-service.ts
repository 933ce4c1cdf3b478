import type { NewDelivery } from './outbox.js'

/**
 * What the webhooks area offers the areas that promise webhooks to their clients (interactions,
 * A2A push notifications): the URL check at configuration time and the durable outbox.
 */
export interface WebhookService {
  /** Whether webhooks are accepted: switched on, with a signing secret. */
  readonly ready: boolean
  /**
   * Checks a URL a client gives, before anything is stored: WEBHOOKS_NOT_CONFIGURED,
   * WEBHOOK_URL_INVALID or WEBHOOK_HOST_NOT_ALLOWED (400). Returns it as parsed.
   */
  checkUrl(url: unknown): string
  /** Whether `owner` may queue `n` more deliveries now. */
  hasRoom(owner: string, n?: number): boolean
  /** Queues a delivery, durable once resolved; WEBHOOK_OUTBOX_FULL (429) or _CAPACITY (503) without room. */
  enqueue(d: NewDelivery & { body: string }): Promise<string>
  /** Reserves a delivery whose body `release` gives later, durable and counted like any other. */
  hold(d: NewDelivery): Promise<string>
  /** Gives a held delivery its body; false when no such delivery is held. */
  release(id: string, body: string): Promise<boolean>
  /** Forgets a held or waiting delivery. */
  drop(id: string): Promise<void>
  /** The held deliveries of `source` (a restart hands them back to the area that holds them). */
  held(source: string): { id: string; ref: string; owner: string }[]
}

export type { NewDelivery }
