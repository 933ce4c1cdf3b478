import type { Area, Platform } from '../platform.js'
import type { AiService } from './ai-service.js'
import { AI } from './key.js'

/**
 * The AI area: agent turns run through governance and scope, call tools over MCP and stream over
 * transport, hence its dependencies. It adds no routes yet.
 */
export const aiArea: Area = {
  name: 'ai',
  dependsOn: ['plugins', 'scope', 'governance', 'mcp', 'transport'],
  install (platform: Platform): void {
    const service: AiService = { agentNames: () => platform.plugins.agents().map((a) => a.name) }
    platform.provide(AI, service)
  }
}
