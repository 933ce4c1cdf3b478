import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describePlugin } from 'uws-agent-platform/sdk/dispatch'
import { scopeFromAgentAttributes } from './scope-config.js'

export interface AgentScopeFinding {
  agent: string
  plugin: string | null
  problem: string
}

/**
 * Spec scope rule 8 for our bundled agents: every agent declares a scope, and an unrestricted one
 * carries a non-blank justification; the attributes must also be usable (same checks as at load).
 */
export function lintAgentScopes(
  agents: readonly { name: string; plugin?: string; scope?: unknown }[]
): AgentScopeFinding[] {
  const out: AgentScopeFinding[] = []
  for (const a of agents) {
    const plugin = a.plugin ?? null
    const s = a.scope as Record<string, unknown> | undefined | null
    if (s === undefined || s === null) {
      out.push({ agent: a.name, plugin, problem: 'declares no scope (agent({ scope: {...} }))' })
      continue
    }
    if (s.unrestricted === true && (typeof s.justification !== 'string' || s.justification.trim() === '')) {
      out.push({ agent: a.name, plugin, problem: 'is unrestricted without a justification' })
      continue
    }
    try {
      scopeFromAgentAttributes(s, a.name)
    } catch (err) {
      out.push({ agent: a.name, plugin, problem: (err as Error).message })
    }
  }
  return out
}

/**
 * Loads every plugin folder under `dir` (folders holding a `plugin.json`), describes its agents
 * with the SDK's own `describePlugin`, and lints their scopes. First-party plugins only: this
 * imports their code in-process.
 */
export async function lintPluginDirectory(dir: string): Promise<{ agents: number; findings: AgentScopeFinding[] }> {
  const root = resolve(dir)
  if (!existsSync(root)) return { agents: 0, findings: [] }
  const agents: { name: string; plugin: string; scope?: unknown }[] = []
  const findings: AgentScopeFinding[] = []
  for (const name of readdirSync(root).sort()) {
    const folder = join(root, name)
    const manifestPath = join(folder, 'plugin.json')
    if (!isDirectory(folder) || !existsSync(manifestPath)) continue
    try {
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name?: string; entry?: string }
      const mod = (await import(pathToFileURL(join(folder, manifest.entry ?? 'index.js')).href)) as {
        default?: unknown
      }
      for (const a of describePlugin(mod.default).agents)
        agents.push({ name: a.name, plugin: manifest.name ?? name, scope: a.scope })
    } catch (err) {
      findings.push({
        agent: '*',
        plugin: name,
        problem: `could not be loaded for the scope lint: ${(err as Error).message}`
      })
    }
  }
  findings.push(...lintAgentScopes(agents))
  return { agents: agents.length, findings }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory()
  } catch {
    return false
  }
}
