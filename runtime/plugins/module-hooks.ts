import { register } from 'node:module'

/**
 * Module resolution for plugins loaded in this process (inline tier; the worker tier may call it in
 * its threads). A plugin's module graph is tagged with `?platform-plugin=<id>` so that:
 * - `uws-agent-platform/sdk` resolves to the host's SDK wherever the plugin folder lives;
 * - `.js` files load as ES modules even with no `"type": "module"` package.json in reach;
 * - every load gets fresh module instances, so a changed helper file is re-read on hot reload
 *   (the cost: an inline tier never frees the old instances; isolate and worker tiers do).
 */
export const PLUGIN_MARK = 'platform-plugin'

const HOOKS = `
let sdk
export function initialize (data) { sdk = data.sdk }
const MARK = ${JSON.stringify(PLUGIN_MARK)}
const tagOf = (u) => { try { return new URL(u).searchParams.get(MARK) } catch { return null } }
const isEsmPath = (p) => p.endsWith('.js') || p.endsWith('.mjs')
export async function resolve (specifier, context, next) {
  const own = specifier.startsWith('file:') ? tagOf(specifier) : null
  const parent = context.parentURL !== undefined ? tagOf(context.parentURL) : null
  if (own === null && parent === null) return next(specifier, context)
  if (specifier === 'uws-agent-platform/sdk') return { url: sdk, format: 'module', shortCircuit: true }
  const r = await next(specifier, context)
  if (!r.url.startsWith('file:')) return r
  const u = new URL(r.url)
  if (!isEsmPath(u.pathname)) return r
  const local = own !== null || specifier.startsWith('.') || specifier.startsWith('/')
  if (!local) return r
  u.searchParams.set(MARK, own ?? parent)
  return { ...r, url: u.href, format: 'module', shortCircuit: true }
}
`

let registered = false

/** Installs the hooks once per thread; cheap to call before every load. */
export function ensurePluginModuleHooks(): void {
  if (registered) return
  registered = true
  register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, { data: { sdk: sdkUrl() } })
}

/** URL of the host's SDK module (`uws-agent-platform/sdk`). */
export function sdkUrl(): string {
  return import.meta.resolve('uws-agent-platform/sdk')
}

let loads = 0
/** The import URL of a plugin entry, tagged so its whole graph loads fresh. */
export function taggedEntryUrl(fileUrl: string): string {
  const u = new URL(fileUrl)
  u.searchParams.set(PLUGIN_MARK, `${Date.now().toString(36)}-${(++loads).toString(36)}`)
  return u.href
}
