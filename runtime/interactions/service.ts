import type { AiMessage, AiService } from '../ai/index.js'
import { PlatformError, isPlatformError, type Backplane, type SharedCounters } from '../contracts/index.js'
import type { Logger } from '../observability/index.js'
import { Cancellation, type RegisteredAgent } from '../plugins/index.js'
import { StepCapture, type Outcome } from './capture.js'
import { conversationKey, rememberTurn } from './conversation-key.js'
import { RunTable, snapshot, type Run } from './run-table.js'
import { behindStore, pacedText, answered, published } from './run-publication.js'
import { isoDuration } from './iso-duration.js'
import { headerOf, interactionOf } from './store-input.js'
import type { StepFeed } from './feed.js'
import type { Interaction, InteractionHeader, InteractionStep, InteractionStore, ListPage } from './types.js'
import { HTTP_ERRORS } from '../http/index.js'
import { INTERACTION_ERRORS } from './errors.js'
import { PrincipalQuota, type QuotaLimits } from './quota.js'
import { IdempotencyKeys, type IdempotencyOptions } from './idempotency.js'
import { runHeader, type InteractionRequest } from './interaction-request.js'
import { LeaseKeeper, type LeaseHolder } from './lease-keeper.js'
import type { WebhookService } from '../webhooks/index.js'
import { checkWebhook, releaseAtEnd, savedWithWebhook } from './webhook.js'

export interface InteractionServiceOptions {
  store: InteractionStore
  feed: StepFeed
  ai: AiService
  agents: () => RegisteredAgent[]
  logger: Logger
  maxSteps: number
  coalesceMs: number
  syncTimeoutMs: number
  /** `platform.interactions.demo-principal`, re-read on each request. */
  demoPrincipal: () => string | undefined
  /** The per-principal quota's limits, re-read on each request. */
  quota: () => QuotaLimits
  /** Where the quota counts (`platform.sharedCounters()`: every node's in cluster mode). */
  counters: () => SharedCounters
  idempotency: Pick<IdempotencyOptions, 'maxKeys' | 'ttlMs' | 'syncWaitMs'>
  /** For a store several nodes share (one with `leases`): this node, its lease and the backplane. */
  cluster?: { node: string; leaseMs: number; backplane: Backplane | undefined }
  /** Where a create's `webhook` is delivered from. */
  webhooks: WebhookService
}

/**
 * The interactions of every owner: create (synchronous or background), continue, get, list,
 * cancel, delete. A record is persisted RUNNING before its turn starts; the turn runs through
 * the AI area's governed pipeline; its steps are appended as they come, published to the feed in
 * seq order once each is durable, so a stream that reads the store and then the feed misses nothing.
 */
export class InteractionService implements LeaseHolder {
  readonly store: InteractionStore
  readonly feed: StepFeed
  private readonly runs = new RunTable()
  // #private: platform.provide freezes the service, and close() still flips this
  #closing = false
  // one quota and one key map (bounded by max-keys) for every API that starts runs
  // `quota.take` takes a create or continue's request bytes from its owner (nothing when refused)
  readonly quota: PrincipalQuota
  readonly idempotency: IdempotencyKeys
  /** Leases of this node's runs and the sweep for lost nodes' (a store several nodes share only). */
  readonly #keeper: LeaseKeeper | undefined

  constructor(private readonly opts: InteractionServiceOptions) {
    this.store = opts.store
    this.feed = opts.feed
    this.quota = new PrincipalQuota(opts.quota, opts.counters)
    this.idempotency = new IdempotencyKeys({ store: opts.store, read: (o, id) => this.get(o, id), ...opts.idempotency })
    const { leases } = opts.store
    this.#keeper =
      leases === undefined || opts.cluster === undefined
        ? undefined
        : new LeaseKeeper({ ...opts.cluster, leases, feed: opts.feed, holder: this, logger: opts.logger })
  }

  /**
   * Whom a reader reads as: its principal, else the demo principal, else `anonymous` (who owns
   * nothing unless the demo principal is named so). The REST reads and the live stream share it.
   */
  readerOf(principal: string | undefined): string {
    return principal ?? this.opts.demoPrincipal() ?? 'anonymous'
  }

  /** Whom a writer writes as: its principal, else the demo principal; undefined means 401. */
  writerOf(principal: string | undefined): string | undefined {
    return principal ?? this.opts.demoPrincipal()
  }

  /** Turns in flight now. */
  get inFlight(): number {
    return this.runs.size
  }

  /**
   * Starts a turn for `owner`. Background: answers at once with the RUNNING record. Otherwise
   * answers with the terminal record, or FAILED when the turn outlives the synchronous timeout.
   */
  async create(owner: string, req: InteractionRequest): Promise<Interaction> {
    if (this.#closing) throw new PlatformError(HTTP_ERRORS.SHUTTING_DOWN)
    const webhookUrl = req.webhook === undefined ? undefined : checkWebhook(this.opts.webhooks, req.webhook, req.store)
    let parent: InteractionHeader | undefined
    if (req.previousInteractionId !== undefined) {
      parent = await this.owned(owner, req.previousInteractionId)
      if (parent === undefined) throw new PlatformError(INTERACTION_ERRORS.INTERACTION_PREVIOUS_UNKNOWN)
    }
    const agent = req.agentId === undefined ? undefined : this.opts.agents().find((a) => a.name === req.agentId)
    if (req.agentId !== undefined && agent === undefined)
      throw new PlatformError(INTERACTION_ERRORS.INTERACTION_UNKNOWN_AGENT, { agentId: req.agentId })
    const wanted = req.model ?? agent?.model
    const runtime = (wanted !== undefined ? this.opts.ai.runtime(wanted) : undefined) ?? this.opts.ai.activeRuntime()
    const header = runHeader(owner, req, parent, wanted ?? runtime?.models[0] ?? null)
    // the run's slot of its owner's quota, given back once its outcome is decided (or nothing starts)
    const release = await this.quota.holdRun(owner)
    let hook: Awaited<ReturnType<typeof savedWithWebhook>>
    try {
      hook = await savedWithWebhook(this.opts.webhooks, header, webhookUrl, () => this.save(header, req))
    } catch (err) {
      release()
      throw err
    }
    const run = this.start(header, req.message, release, {
      // an agent's own run() is one opaque call, and a runtime that does not advertise
      // cancellation cannot be stopped: both run to completion
      cancellable: agent?.run === undefined && runtime?.capabilities.includes('cancellation') === true
    })
    if (hook !== undefined) releaseAtEnd({ ...this.opts, feed: this.feed }, header.id, hook)
    if (req.input !== undefined) run.capture.input(req.input)
    void this.drive(run, req)
    if (req.background) return snapshot(run)
    const timer = setTimeout(() => {
      this.end(run, run.capture.fail(`timed out after ${isoDuration(this.opts.syncTimeoutMs)}`, 'timeout'))
      run.controller.abort()
    }, this.opts.syncTimeoutMs)
    let finished: Interaction
    try {
      finished = await run.finished!
    } finally {
      clearTimeout(timer)
    }
    // the 200 acknowledges the turn: its governance decisions are committed before it, like its steps
    await this.opts.ai.recordsWritten()
    return finished
  }

  /** Saves a new run's header (with the request's idempotency key, when it has one); store:false saves nothing. */
  private async save(header: InteractionHeader, req: InteractionRequest): Promise<void> {
    if (req.store && req.idempotency !== undefined) {
      const held = await this.store.saveKeyed({ ...header }, req.idempotency, Date.now())
      if (held !== undefined)
        throw new PlatformError(INTERACTION_ERRORS.IDEMPOTENCY_KEY_HELD, {
          interactionId: held.interactionId,
          record: held
        })
    } else if (req.store) await this.store.save({ ...header })
  }

  /** Chains a turn onto `parentId`: same conversation, its history, `parentId` set. */
  continue(owner: string, parentId: string, req: InteractionRequest): Promise<Interaction> {
    return this.create(owner, { ...req, previousInteractionId: parentId })
  }

  /** The interaction with its steps when `owner` owns it; undefined otherwise (unknown or not theirs). */
  async get(owner: string, id: string): Promise<Interaction | undefined> {
    const run = this.runs.get(id)
    // store:false lives only in its run
    if (run !== undefined && !run.header.store) return run.header.userId === owner ? snapshot(run) : undefined
    const found = await this.store.load(id)
    return found !== undefined && found.userId === owner ? interactionOf(found, found.steps) : undefined
  }

  /** The owner's interactions, newest first, without steps. */
  list(owner: string, query: { conversationId?: string; limit: number; cursor?: string }): Promise<ListPage> {
    return this.store.list({ ...query, userId: owner })
  }

  /**
   * Requests the cancellation of a run in flight on any node; false when no such run of `owner`
   * is in flight. A cancellable run ends CANCELLED now (on another node: once its node hears of
   * the cancel, persisted first), keeping the steps captured so far; another runs on.
   */
  async cancel(owner: string, id: string): Promise<boolean> {
    const run = this.runs.get(id)
    if (run === undefined) return (await this.#keeper?.requestCancel(owner, id)) ?? false
    // an ended run whose last writes are still landing is no longer in flight
    if (run.header.userId !== owner || run.capture.outcome !== undefined) return false
    this.cancelHere(id)
    return true
  }

  /** Ends the run `id` in flight here CANCELLED, if it can be stopped. */
  cancelHere(id: string): void {
    const run = this.runs.get(id)
    if (run === undefined || run.capture.outcome !== undefined || !run.cancellable) return
    this.end(run, run.capture.fail('cancelled by the client', 'cancelled', 'CANCELLED'))
    run.controller.abort()
  }

  /** This node no longer owns the run `id` (another node ended it): it stops and shows the stored end. */
  lostHere(id: string): void {
    const run = this.runs.get(id)
    if (run !== undefined && run.capture.outcome === undefined) void this.yieldEnd(run)
  }

  leasedRuns(): string[] {
    return this.runs.leased()
  }

  runsHere(id: string): boolean {
    return this.runs.get(id) !== undefined
  }

  /** Deletes an interaction of `owner` (stopping its run first); false when unknown or not theirs. */
  async delete(owner: string, id: string): Promise<boolean> {
    const run = this.runs.get(id)
    if (run !== undefined) {
      if (run.header.userId !== owner) return false
      await this.drop(run)
      // live viewers learn the end; the record itself goes below
      this.feed.publishTerminal({ ...run.header, status: 'CANCELLED', errorMessage: 'deleted' })
      if (!run.header.store) return true
    }
    if ((await this.owned(owner, id)) === undefined) return false
    return await this.store.delete(id)
  }

  /**
   * Stops every run without a terminal write and waits for the writes already made: the store
   * marks them interrupted at the next start, as it does after a crash.
   */
  async close(): Promise<void> {
    this.#closing = true
    this.#keeper?.stop()
    await Promise.all(this.runs.all().map((r) => this.drop(r)))
  }

  private async owned(owner: string, id: string): Promise<InteractionHeader | undefined> {
    const found = await this.store.load(id)
    return found !== undefined && found.userId === owner ? found : undefined
  }

  private start(header: InteractionHeader, message: string, release: () => void, how: { cancellable: boolean }): Run {
    let resolve: ((i: Interaction) => void) | undefined
    const finished = header.background ? undefined : new Promise<Interaction>((r) => (resolve = r))
    const run: Run = {
      header,
      steps: header.store && header.background ? undefined : [],
      // emit runs only after the run exists: the turn starts once start() has returned
      capture: new StepCapture({
        maxSteps: this.opts.maxSteps,
        coalesceMs: this.opts.coalesceMs,
        emit: (step) => this.record(run, step)
      }),
      controller: new Cancellation(),
      cancellable: how.cancellable,
      unpublished: [],
      lastAck: undefined,
      onPublished: undefined,
      allPublished: undefined,
      ending: undefined,
      finished,
      resolve,
      dropped: false,
      message,
      release,
      handedToClient: false
    }
    this.runs.add(run)
    return run
  }

  private async drive(run: Run, req: InteractionRequest): Promise<void> {
    const { header } = run
    const memoryKey = conversationKey(header.userId, header.conversationId)
    try {
      // store:false keeps no conversation either: it persists nothing
      const stored: AiMessage[] = header.store ? await this.opts.ai.memory.read(memoryKey) : []
      const history = req.history === undefined ? stored : [...stored, ...req.history]
      const turn = this.opts.ai.runTurn(
        {
          message: req.message,
          history,
          userId: header.userId,
          conversationId: header.conversationId,
          ...(req.agentId !== undefined ? { agent: req.agentId } : {}),
          ...(req.systemPrompt !== undefined ? { systemPrompt: req.systemPrompt } : {}),
          ...(req.model !== undefined ? { model: req.model } : {}),
          ...(req.roles !== undefined ? { roles: req.roles } : {}),
          ...(req.metadata !== undefined ? { clientMetadata: req.metadata } : {}),
          ...req.turn
        },
        run.controller,
        pacedText(run)
      )
      for await (const e of turn) {
        if (run.capture.outcome !== undefined) break
        if (e.type === 'tool-start' && e.client === true) run.handedToClient = true
        this.end(run, run.capture.event(e))
        if (behindStore(run)) await published(run)
      }
    } catch (err) {
      this.end(run, run.capture.fail(`turn failed: ${err instanceof Error ? err.message : String(err)}`, 'runtime'))
    }
    // the pipeline always ends with a terminal event; this guards a broken contract
    this.end(run, run.capture.fail('the turn ended without a result', 'runtime'))
  }

  /** A captured step: kept, persisted in order, published once durable. */
  private record(run: Run, step: InteractionStep): void {
    if (run.dropped) return
    run.steps?.push(step)
    if (!run.header.store) {
      this.feed.publishStep(run.header.id, step)
      return
    }
    // issued now, not after the previous commit: the store batches appends in flight (lmdb-js
    // puts them in one transaction) and keeps one interaction's steps in seq order
    const ack = this.store.appendStep(run.header.id, step)
    run.unpublished.push({ step, state: 'writing', ack })
    // a step of the group whose answer the run already waits for: that one reaction marks it too
    if (ack === run.lastAck) return
    run.lastAck = ack
    ack.then(
      () => answered(run, ack, 'stored', this.feed),
      (err: unknown) => {
        if (isPlatformError(err, INTERACTION_ERRORS.INTERACTION_ENDED)) void this.yieldEnd(run)
        else
          this.opts.logger.error({ err, interaction: run.header.id, seq: step.seq }, 'interaction step not persisted')
        answered(run, ack, 'failed', this.feed)
      }
    )
  }

  /** Everything the run wrote so far is answered: its steps published and, once ended, its end. */
  private settled(run: Run): Promise<void> {
    return run.ending ?? published(run)
  }

  /**
   * The store refused a write because the run has ended there already (another process ended it):
   * this run stops writing, and its viewers and synchronous caller get the stored outcome.
   */
  private async yieldEnd(run: Run): Promise<void> {
    if (run.dropped) return
    this.opts.logger.warn({ interaction: run.header.id }, 'interaction ended elsewhere: this run stops')
    run.dropped = true
    run.capture.abandon()
    run.controller.abort()
    this.runs.forget(run)
    const stored = await this.store.load(run.header.id).catch(() => undefined)
    const final = stored === undefined ? { ...run.header } : headerOf(stored)
    this.feed.publishTerminal(final)
    run.resolve?.(stored ?? snapshot(run))
  }

  /** Applies the terminal outcome (once: the capture's compare-and-set gives it to one caller only). */
  private end(run: Run, outcome: Outcome | undefined): void {
    if (outcome === undefined || run.dropped) return
    const h = run.header
    h.status = outcome.status
    h.finalText = outcome.finalText
    h.errorMessage = outcome.errorMessage
    h.usage = run.capture.usage
    h.updatedAt = new Date().toISOString()
    // a client that reads the terminal state may start its next run at once: the quota frees now,
    // not when the last writes land (a store's read can see them before this process hears back)
    this.runs.uncount(run)
    const final: InteractionHeader = { ...h }
    // the terminal write queues behind the publication of every step
    run.ending = published(run).then(async () => {
      if (run.dropped) return
      if (final.store && final.status === 'COMPLETED' && !run.handedToClient)
        await rememberTurn(this.opts.ai, this.opts.logger, run.message, final)
      if (final.store) {
        const refused = await this.store.save(final).then(
          () => false,
          (err: unknown) => {
            if (isPlatformError(err, INTERACTION_ERRORS.INTERACTION_ENDED)) return true
            this.opts.logger.error({ err, interaction: final.id }, 'interaction end not persisted')
            return false
          }
        )
        if (refused) return this.yieldEnd(run)
      }
      this.runs.forget(run)
      this.feed.publishTerminal(final)
      run.resolve?.(snapshot(run))
    })
  }

  /** Stops a run for good: no more steps or terminal write; waits for the writes it made. */
  private async drop(run: Run): Promise<void> {
    if (run.dropped) return
    run.dropped = true
    run.capture.abandon()
    run.controller.abort()
    this.runs.forget(run)
    await this.settled(run)
    run.resolve?.(snapshot(run))
  }
}
