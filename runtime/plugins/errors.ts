import { defineErrors } from '../contracts/index.js'

/**
 * The plugin host's codes (core: `Platform` builds the host). All are internal: a failed call
 * reaches a client only as its protocol maps it (an MCP tool's `isError` result naming the cause),
 * and a failed load only as the plugin's status.
 */
export const PLUGINS_ERRORS = defineErrors({
  /** A call failed inside the plugin; `plugin` and `reason` (threw, timeout, memory, ...) say which and why. */
  PLUGIN_CALL_FAILED: { status: 500, internal: true, message: (p) => String(p.detail) },
  /** The operator refused something the manifest asks for; the message holds a grant to paste into platform.yaml. */
  GRANT_REFUSED: { status: 500, internal: true, message: (p) => String(p.detail) },
  /** plugin.json failed validation; `errors` holds one line per problem, each naming the field. */
  MANIFEST_INVALID: {
    status: 500,
    internal: true,
    message: (p) => (Array.isArray(p.errors) ? p.errors.join('; ') : String(p.errors))
  },
  TIER_UNAVAILABLE: {
    status: 500,
    internal: true,
    message: (p) => `the '${p.tier}' sandbox tier is not available in this build of the platform`
  },
  /** A sandbox process died while a plugin was loading into it; `blamed` when that plugin's isolate was running. */
  PLUGIN_LOAD_INTERRUPTED: { status: 500, internal: true, message: (p) => String(p.detail) }
})
