// A plugin's state as the status lists show it, and the names it contributes by kind.

import type { PluginDescriptor, SandboxKind } from './contract.js'

export type PluginState = 'live' | 'failed' | 'disabled'

export interface PluginStatus {
  name: string
  dir: string
  version?: string
  sandbox?: SandboxKind
  state: PluginState
  error?: string
  contributes: {
    tools: string[]
    resources: string[]
    prompts: string[]
    agents: string[]
    policyTypes: string[]
    classifiers: string[]
    embedders: string[]
    runtimes?: string[]
  }
}

/** Each kind of contribution, as a clash message names it. */
export const KIND_LABEL = {
  tools: 'tool',
  resources: 'resource',
  prompts: 'prompt',
  agents: 'agent',
  policyTypes: 'policy type',
  classifiers: 'classifier',
  embedders: 'embedder',
  runtimes: 'runtime'
} as const

/** The names a plugin contributes, by kind: what collisions are checked on and what status lists. */
export function contributionNames(d: PluginDescriptor): Record<keyof typeof KIND_LABEL, string[]> {
  return {
    tools: d.tools.map((t) => t.name),
    resources: d.resources.map((r) => r.uri),
    prompts: d.prompts.map((p) => p.name),
    agents: d.agents.map((a) => a.name),
    policyTypes: d.policyTypes.map((p) => p.type),
    classifiers: d.classifiers.map((c) => c.name),
    embedders: d.embedders.map((e) => e.name),
    runtimes: (d.runtimes ?? []).map((r) => r.name)
  }
}

/** The contributions of a plugin that is not live. */
export const NONE = {
  tools: [],
  resources: [],
  prompts: [],
  agents: [],
  policyTypes: [],
  classifiers: [],
  embedders: [],
  runtimes: []
}
