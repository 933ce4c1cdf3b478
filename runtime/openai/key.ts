import { AreaKey } from '../contracts/index.js'
import type { Platform } from '../platform.js'
import type { OpenAiApi } from './api.js'

/** The OpenAI-compatible API: responses and chat completions mapped onto interactions. */
export const OPENAI_API = new AreaKey<OpenAiApi>('openai')

export const openAiApiOf = (platform: Platform): OpenAiApi => platform.area(OPENAI_API)
