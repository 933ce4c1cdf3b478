import type { CoreState } from './core-state.js'
import { PlatformError } from '../contracts/index.js'
import { ErrorCode, MCP_ERRORS, rpcFailure, isRpcFailure } from './errors.js'
import { clientCapabilities, filterInputRequests, type RetryInput } from './calls.js'
import { legacyTask } from './describe.js'
import { settle } from './runners.js'
import type { Outcome, Task, Runner } from './tasks.js'
import type { CallContext, JsonObject, Sink } from './types.js'

/** Longest TTL a 2025-11-25 client may ask for a task (one hour). */
const MAX_LEGACY_TTL_MS = 3_600_000

/** The task `p.taskId` names, visible to the caller's principal; the not-found wording differs per form. */
export async function taskOf(core: CoreState, p: JsonObject, ctx: CallContext, legacy: boolean): Promise<Task> {
  if (typeof p.taskId !== 'string') throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, { detail: 'Missing taskId' })
  // a task another node runs (a shared store) is read first
  const fetched = core.tasks.fetch(p.taskId)
  if (fetched !== undefined) await fetched
  const t = core.tasks.get(p.taskId, ctx.principal ?? null)
  if (t === undefined)
    throw new PlatformError(MCP_ERRORS.MCP_INVALID_PARAMS, {
      detail: legacy ? 'Failed to retrieve task: Task not found' : `Unknown task: ${p.taskId}`
    })
  return t
}

/** Tasks extension: run; if the tool settles within the sync window answer directly, else hand out a task. */
export async function taskCall(
  core: CoreState,
  runner: Runner,
  retry: RetryInput,
  ctx: CallContext,
  name: string
): Promise<JsonObject> {
  const t = core.tasks.create(ctx.principal ?? null)
  const first = runner(retry.gathered, retry.toolState, t.abort.signal)
  let timer: NodeJS.Timeout | undefined
  const early = await Promise.race([
    first,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => {
        resolve(undefined)
      }, core.opts.syncWindowMs)
    })
  ])
  clearTimeout(timer)
  if (early !== undefined && early.kind !== 'error') {
    core.tasks.forget(t)
    return await settle(core, early, runner, retry, ctx, 'tools/call', name, true)
  }
  // input a task asks for later is held to the same rule: only what the client declared
  const caps = clientCapabilities(ctx)
  const declared = (o: Outcome): Outcome => {
    if (o.kind !== 'input') return o
    try {
      return { ...o, inputRequests: filterInputRequests(o.inputRequests, caps) }
    } catch (err) {
      const e = rpcFailure(err)
      return { kind: 'error', error: { code: e.rpcCode ?? ErrorCode.InternalError, message: e.message, data: e.data } }
    }
  }
  const resumeRunner: Runner = async (g, s, signal) => declared(await runner({ ...retry.gathered, ...g }, s, signal))
  void core.tasks.drive(t, resumeRunner, first.then(declared)).catch(() => {})
  // the handle shows the task as it was handed out, even if it moves while the write commits
  const handle = {
    resultType: 'task',
    taskId: t.id,
    status: t.status,
    createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt,
    ttlMs: t.ttlMs,
    pollIntervalMs: t.pollIntervalMs
  }
  await core.tasks.keep(t)
  return handle
}

/** 2025-11-25 experimental form: the client asked with `params.task`; its input goes over the GET stream. */
export async function legacyTaskCall(
  core: CoreState,
  runner: Runner,
  taskParams: JsonObject,
  ctx: CallContext
): Promise<JsonObject> {
  const ttl =
    typeof taskParams.ttl === 'number' && taskParams.ttl > 0
      ? Math.min(taskParams.ttl, MAX_LEGACY_TTL_MS)
      : core.tasks.defaultTtlMs
  const t = core.tasks.create(ctx.principal ?? null, ttl)
  const s = ctx.session
  const sink: Sink = {
    notify: (m) => {
      s?.notify(m)
    }
  }
  if (s !== undefined)
    sink.request = async (method, params, signal) => await core.requestOverChannel(s, method, params, signal)
  const tctx: CallContext = { ...ctx, sink, signal: t.abort.signal }
  const sessionRunner: Runner = async (g, st, signal) => {
    const out = await runner(g, st, signal)
    try {
      return {
        kind: 'complete',
        result: await settle(
          core,
          out,
          runner,
          { ...(g !== undefined ? { gathered: g } : {}), toolState: st },
          tctx,
          'tools/call',
          '',
          false
        )
      }
    } catch (err) {
      return {
        kind: 'error',
        error: {
          code: isRpcFailure(err) ? (err.rpcCode ?? ErrorCode.InternalError) : ErrorCode.InternalError,
          message: (err as Error).message
        }
      }
    }
  }
  void core.tasks.drive(t, sessionRunner, sessionRunner(undefined, undefined, t.abort.signal)).catch(() => {})
  const handle = { task: legacyTask(t) }
  await core.tasks.keep(t)
  return handle
}
