/**
 * The process-level property map: our stand-in for JVM system properties
 * (rule 4 of docs/scope.md). It is deliberately NOT part of the configuration: no `platform.yaml` key, no
 * `PLATFORM_*` environment variable and no `--set` flag binds to it. An operator sets a property
 * in code that runs in the platform process before or while it serves (a launcher script, an
 * inline plugin, a test), and the scope tiers read it on every request that needs it, so setting
 * or clearing it takes effect on the next request.
 */
// One map per process, shared even if this module is loaded twice (say from `dist/` by a preload
// script and again by the server), like the JVM's single property table.
const KEY = Symbol.for('agent-platform.system-properties')
const g = globalThis as unknown as Record<symbol, Map<string, string> | undefined>
const props: Map<string, string> = (g[KEY] ??= new Map<string, string>())

/** When `true`, a semantic-intent scope with no embedding runtime admits requests unscreened. */
export const SEMANTIC_FAIL_OPEN_PROPERTY = 'org.platform.ai.scope.semantic-intent.fail-open'
/** When `true`, an uncertain LLM-classifier verdict admits the request instead of failing closed. */
export const LLM_FAIL_OPEN_PROPERTY = 'org.platform.ai.scope.llm-classifier.fail-open'

export function setSystemProperty(key: string, value: string): void {
  if (typeof key !== 'string' || key === '') throw new TypeError('system property key must be a non-empty string')
  props.set(key, String(value))
}

export function getSystemProperty(key: string): string | undefined {
  return props.get(key)
}

export function clearSystemProperty(key: string): boolean {
  return props.delete(key)
}

/** Like Java's `Boolean.getBoolean`: true only when the property is set to `true`, ignoring case. */
export function booleanSystemProperty(key: string): boolean {
  const v = props.get(key)
  return v !== undefined && v.toLowerCase() === 'true'
}
