import type { Area, Platform } from '../platform.js'
import { INTERACTIONS } from '../interactions/index.js'
import { AI } from '../ai/index.js'
import { OpenAiApi } from './api.js'
import { OPENAI_API_CONFIG_KEYS } from './config-keys.js'
import { OPENAI_API_ERRORS } from './errors.js'
import { OPENAI_API } from './key.js'
import { installOpenAiRoutes } from './routes.js'

/**
 * The OpenAI-compatible API: `/v1` over the interactions. Off (`platform.openai-api.enabled:
 * false`), or with the interactions off, it adds no routes and provides no service.
 */
export const openAiArea: Area = {
  name: 'openai',
  dependsOn: ['ai', 'interactions'],
  configKeys: OPENAI_API_CONFIG_KEYS,
  errors: OPENAI_API_ERRORS,
  install(platform: Platform): void {
    if (!platform.config.get('platform.openai-api.enabled') || !platform.hasArea(INTERACTIONS)) return
    const api = new OpenAiApi({
      interactions: platform.area(INTERACTIONS),
      ai: platform.area(AI),
      agents: () => platform.plugins.agents()
    })
    installOpenAiRoutes(platform, api)
    platform.provide(OPENAI_API, api)
  }
}
