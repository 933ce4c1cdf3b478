/**
 * The configuration keys the scope area (embedders and classifiers of the scope tiers; the two
 * fail-open switches are process properties, not config) owns; `runtime/areas.ts` gathers them with
 * the others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

const { nonEmpty, positiveInt } = KEY_SCHEMA

export const SCOPE_CONFIG_KEYS = {
  'platform.ai.scope.embedder': {
    schema: nonEmpty,
    default: 'none',
    description:
      'Embedding runtime of the EMBEDDING_SIMILARITY and SEMANTIC_INTENT scope tiers: `none` (they degrade to RULE_BASED), `lexical` (built-in, offline, word overlap only), `openai` (an OpenAI-compatible `/v1/embeddings` server), or the name of a plugin embedder'
  },
  'platform.ai.scope.embeddings.base-url': {
    schema: nonEmpty,
    description: 'For embedder `openai`: base URL including the version segment, e.g. `http://127.0.0.1:11434/v1`'
  },
  'platform.ai.scope.embeddings.model': {
    schema: nonEmpty,
    description: 'For embedder `openai`: the embedding model name'
  },
  'platform.ai.scope.embeddings.api-key': {
    schema: nonEmpty,
    secret: true,
    description: 'For embedder `openai`: bearer token sent to the server, if it needs one'
  },
  'platform.ai.scope.embeddings.timeout-ms': {
    schema: positiveInt,
    default: 5000,
    description: 'Bound of one embedding call (and of a plugin embedder call)'
  },
  'platform.ai.scope.classifier': {
    schema: nonEmpty,
    default: 'none',
    description:
      "Decision model of the LLM_CLASSIFIER scope tier: `none` (the AI runtime's decision model when one is installed, otherwise every request on that tier is denied), `openai` (an OpenAI-compatible `/v1/chat/completions` server), or the name of a plugin classifier"
  },
  'platform.ai.scope.chat.base-url': {
    schema: nonEmpty,
    description: 'For classifier `openai`: base URL including the version segment'
  },
  'platform.ai.scope.chat.model': { schema: nonEmpty, description: 'For classifier `openai`: the chat model name' },
  'platform.ai.scope.chat.api-key': {
    schema: nonEmpty,
    secret: true,
    description: 'For classifier `openai`: bearer token sent to the server, if it needs one'
  },
  'platform.ai.scope.chat.timeout-ms': {
    schema: positiveInt,
    default: 5000,
    description: 'Bound of one LLM-tier scope question (waiting for a slot included)'
  },
  'platform.ai.scope.chat.max-concurrency': {
    schema: positiveInt,
    default: 8,
    description:
      'LLM-tier scope questions in flight at once; a question that gets no slot before its deadline is uncertain (denied)'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof SCOPE_CONFIG_KEYS> {}
}
