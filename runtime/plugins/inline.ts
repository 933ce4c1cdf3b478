import { pathToFileURL } from 'node:url'
import { describePlugin, invokeContribution } from 'agent-platform/sdk/dispatch'
import { ensurePluginModuleHooks, taggedEntryUrl } from './module-hooks.js'
import type { SandboxInstance, LoadSpec, InvokeRequest, InvokeOptions, Capabilities, PluginDescriptor } from './contract.js'

/** What plugin code sees as `ctx`, built from host capabilities (shared by the inline and worker tiers). */
export function pluginCtx (caps: Capabilities, signal: AbortSignal, onProgress?: (p: unknown) => void): Record<string, unknown> {
  const log = {
    debug: (msg: string, data?: object) => caps.log.debug(data ?? {}, msg),
    info: (msg: string, data?: object) => caps.log.info(data ?? {}, msg),
    warn: (msg: string, data?: object) => caps.log.warn(data ?? {}, msg),
    error: (msg: string, data?: object) => caps.log.error(data ?? {}, msg)
  }
  const ctx: Record<string, unknown> = { log, signal }
  if (caps.kv !== undefined) ctx.kv = caps.kv
  if (caps.fetch !== undefined) {
    const f = caps.fetch
    ctx.fetch = async (url: string, init?: object) => { const r = await f(url, init); return { ...r, json: () => JSON.parse(r.text) } }
  }
  if (caps.env !== undefined) ctx.env = { ...caps.env }
  if (onProgress !== undefined) ctx.progress = onProgress
  return ctx
}

/** A plugin object already in hand (first-party code, tests). */
export function inlineInstance (def: unknown, caps: Capabilities): SandboxInstance {
  const descriptor: PluginDescriptor = describePlugin(def)
  return {
    kind: 'inline',
    descriptor,
    async invoke (req: InvokeRequest, opts: InvokeOptions = {}) {
      const signal = opts.signal ?? new AbortController().signal
      return await invokeContribution(def as never, req, pluginCtx(caps, signal, opts.onProgress) as never)
    },
    async dispose () {}
  }
}

/** The inline tier: the entry runs in the host process, for plugins the operator lists explicitly. */
export async function loadInline (spec: LoadSpec): Promise<SandboxInstance> {
  // a tag per load so the changed files are re-imported rather than served from the module cache
  ensurePluginModuleHooks()
  const mod = await import(taggedEntryUrl(pathToFileURL(spec.entry).href)) as { default?: unknown }
  return inlineInstance(mod.default, spec.capabilities)
}
