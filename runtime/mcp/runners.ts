import { toContents, toPromptResult, isInputRequired } from './content.js'
import type { CoreState } from './core-state.js'
import { PlatformError } from '../contracts/index.js'
import { ErrorCode, HttpStatus, MCP_ERRORS } from './errors.js'
import {
  clientCapabilities,
  failureOutcome,
  filterInputRequests,
  invokeContext,
  valueOutcome,
  type RetryInput
} from './calls.js'
import type { InvokeContext, PromptEntry, ResourceEntry, ToolEntry } from './entries.js'
import type { Outcome, Runner } from './tasks.js'
import type { CallContext, JsonObject } from './types.js'

/** How many times one session-dialect call may ask the client for input before it is cut off. */
const MAX_INPUT_ROUNDS = 16

/**
 * One tools/call, resources/read or prompts/get: what it runs and, as the same object, the
 * `info` the invocation wrapper (tracing) sees, so a run allocates nothing for it.
 */
export type Invocation =
  | { type: 'tool'; name: string; argCount: number; ctx: CallContext; tool: ToolEntry; args: JsonObject }
  | { type: 'resource'; name: string; argCount: 1; ctx: CallContext; resource: ResourceEntry }
  | {
      type: 'prompt'
      name: string
      argCount: number
      ctx: CallContext
      prompt: PromptEntry
      args: Record<string, string>
    }

// not async: the handler's own promise goes to the wrapper, no second one per run
function invoke(inv: Invocation, ictx: InvokeContext): Promise<unknown> {
  switch (inv.type) {
    case 'tool':
      return inv.tool.invoke(inv.args, ictx)
    case 'resource':
      return inv.resource.read(inv.name, ictx)
    default:
      return inv.prompt.get(inv.args, ictx)
  }
}

/** A handler's value → the outcome: input required, or the method's result shape. */
function outcomeOf(inv: Invocation, v: unknown): Outcome {
  if (inv.type === 'tool' || isInputRequired(v)) return valueOutcome(v)
  if (inv.type === 'resource')
    return { kind: 'complete', result: { contents: toContents(v, inv.name, inv.resource.mimeType) } }
  return { kind: 'complete', result: toPromptResult(v, inv.prompt.description) }
}

/** A handler's throw → a tool error result (tools) or a protocol error (resources, prompts). */
function failureOf(inv: Invocation, err: unknown): Outcome {
  if (inv.type === 'tool') return failureOutcome(err)
  const why = (err as Error).message
  const message =
    inv.type === 'resource' ? `Failed to read resource ${inv.name}: ${why}` : `Prompt '${inv.name}' failed: ${why}`
  return { kind: 'error', error: { code: ErrorCode.InternalError, message } }
}

/** The runner of one invocation: each run (first, and each input round) calls the handler once. */
export function runnerFor(core: CoreState, inv: Invocation, p: JsonObject, caps: JsonObject): Runner {
  const ctx = inv.ctx
  return async (gathered, toolState, signal) => {
    const ictx = invokeContext(ctx, signal, p, gathered, toolState, caps)
    try {
      return outcomeOf(inv, await core.wrap(inv, () => invoke(inv, ictx)))
    } catch (err) {
      return failureOf(inv, err)
    }
  }
}

/** What settling a call needs besides its outcome: the call (to run again with more input) and where it came from. */
type SettleArgs = [runner: Runner, retry: RetryInput, ctx: CallContext, method: string, target: string, modern: boolean]

/** Runs the handler on what a retry gathered and settles its outcome (complete, or input asked again). */
export async function runSettled(core: CoreState, ...args: SettleArgs): Promise<JsonObject> {
  const [runner, retry, ctx] = args
  return await settle(core, await runner(retry.gathered, retry.toolState, ctx.signal), ...args)
}

/** Complete → result; input required → an InputRequiredResult (stateless) or client requests (session). */
export async function settle(
  core: CoreState,
  out: Outcome,
  ...[runner, retry, ctx, method, target, modern]: SettleArgs
): Promise<JsonObject> {
  let gathered = retry.gathered
  for (let round = 0; ; round++) {
    if (out.kind === 'complete') return out.result
    if (out.kind === 'error')
      throw new PlatformError(
        MCP_ERRORS.MCP_HANDLER_ERROR,
        { detail: out.error.message },
        { rpcCode: out.error.code, data: out.error.data }
      )
    const caps = clientCapabilities(ctx)
    if (modern) {
      const inputRequests = filterInputRequests(out.inputRequests, caps)
      const requestState = core.codec.sign({
        m: method,
        n: target,
        p: ctx.principal ?? null,
        ...(out.toolState !== undefined ? { s: out.toolState } : {}),
        ...(gathered !== undefined ? { r: gathered } : {})
      })
      return { resultType: 'input_required', inputRequests, requestState }
    }
    const request = ctx.sink.request
    if (request === undefined)
      throw new PlatformError(MCP_ERRORS.MCP_INVALID_REQUEST, {
        detail:
          'This call needs input from the client: accept text/event-stream on POST, or use the WebSocket transport'
      })
    if (round >= MAX_INPUT_ROUNDS)
      throw new PlatformError(MCP_ERRORS.MCP_INTERNAL_ERROR, { detail: 'Too many input rounds' })
    const inputRequests = filterInputRequests(out.inputRequests, caps, HttpStatus.InBand)
    const answers = await Promise.all(
      Object.entries(inputRequests).map(
        async ([k, r]) => [k, await request(r.method as string, r.params ?? {}, ctx.signal)] as const
      )
    )
    gathered = { ...gathered, ...Object.fromEntries(answers) }
    out = await runner(gathered, out.toolState, ctx.signal)
  }
}
