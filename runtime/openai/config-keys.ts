/**
 * The configuration keys the OpenAI-compatible API owns; `runtime/areas.ts` gathers them with the others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

export const OPENAI_API_CONFIG_KEYS = {
  'platform.openai-api.enabled': {
    schema: KEY_SCHEMA.bool,
    default: true,
    description:
      'Serve the OpenAI-compatible API under `/v1` (models, responses, chat completions) on top of the interactions; off, or with interactions off, `/v1` is not served'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof OPENAI_API_CONFIG_KEYS> {}
}
