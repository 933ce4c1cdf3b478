import { pathToFileURL } from 'node:url'
import { describePlugin, invokeContribution } from 'uws-agent-platform/sdk/dispatch'
import { runCapability } from './capability-call.js'
import { ensurePluginModuleHooks, taggedEntryUrl } from './module-hooks.js'
import { Cancellation, abortSignalOf, type CancelSignal } from './cancel.js'
import type {
  SandboxInstance,
  LoadSpec,
  InvokeRequest,
  InvokeOptions,
  Capabilities,
  PluginDescriptor
} from './contract.js'

type PluginLog = Record<'debug' | 'info' | 'warn' | 'error', (msg: string, data?: object) => void>
const logs = new WeakMap<Capabilities, PluginLog>()

/** `ctx.log`: one per plugin's capabilities, not one per call. */
function logOf(caps: Capabilities): PluginLog {
  let log = logs.get(caps)
  if (log === undefined) {
    log = {
      debug: (msg, data) => {
        caps.log.debug(data ?? {}, msg)
      },
      info: (msg, data) => {
        caps.log.info(data ?? {}, msg)
      },
      warn: (msg, data) => {
        caps.log.warn(data ?? {}, msg)
      },
      error: (msg, data) => {
        caps.log.error(data ?? {}, msg)
      }
    }
    logs.set(caps, log)
  }
  return log
}

/**
 * What plugin code sees as `ctx`, built from host capabilities: own properties in every tier, and
 * `signal` a real AbortSignal made when first read (most calls never read it).
 */
export function pluginCtx(
  caps: Capabilities,
  signal: CancelSignal,
  onProgress?: (p: unknown) => void
): Record<string, unknown> {
  const ctx: Record<string, unknown> = {
    log: logOf(caps),
    get signal() {
      return abortSignalOf(signal)
    }
  }
  if (caps.kv !== undefined) ctx.kv = caps.kv
  if (caps.fetch !== undefined) {
    const f = caps.fetch
    ctx.fetch = async (url: string, init?: object) => {
      const r = await f(url, init)
      return { ...r, json: () => JSON.parse(r.text) }
    }
  }
  if (caps.env !== undefined) ctx.env = { ...caps.env }
  if (onProgress !== undefined) ctx.progress = onProgress
  return ctx
}

/** Host calls in JSON both ways, as in the other tiers: the plugin never holds a host object. */
async function hostCall(caps: Capabilities, op: string, args: unknown[]): Promise<unknown> {
  const json = await runCapability(caps, op, JSON.stringify(args))
  return json === '' ? undefined : (JSON.parse(json) as unknown)
}

/** A plugin object already in hand (first-party code, tests). */
export function inlineInstance(def: unknown, caps: Capabilities): SandboxInstance {
  const descriptor: PluginDescriptor = describePlugin(def)
  return {
    kind: 'inline',
    descriptor,
    invoke(req: InvokeRequest, opts: InvokeOptions = {}) {
      return invokeContribution(
        def as never,
        req,
        pluginCtx(caps, opts.signal ?? new Cancellation(), opts.onProgress) as never,
        (op: string, args: unknown[]) => hostCall(caps, op, args)
      )
    },
    async dispose() {}
  }
}

/** The inline tier: the entry runs in the host process, for plugins the operator lists explicitly. */
export async function loadInline(spec: LoadSpec): Promise<SandboxInstance> {
  // a tag per load so the changed files are re-imported rather than served from the module cache
  ensurePluginModuleHooks()
  const mod = (await import(taggedEntryUrl(pathToFileURL(spec.entry).href))) as { default?: unknown }
  return inlineInstance(mod.default, spec.capabilities)
}
