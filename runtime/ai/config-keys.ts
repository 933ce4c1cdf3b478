/**
 * The configuration keys the AI area (runtimes, agent endpoints, conversation memory, feedback
 * injection) owns; `runtime/areas.ts` gathers them with the others.
 */
import { KEY_SCHEMA, type KeyDefs, type KeyValues } from '../config/index.js'

const { nonEmpty, positiveInt, strList } = KEY_SCHEMA

export const AI_CONFIG_KEYS = {
  'platform.ai.governance.feedback.max-items': {
    schema: { type: 'integer', minimum: 0, maximum: 100 },
    default: 5,
    description:
      "Distinct deny and prefer guidance lines (each at most 512 characters) re-injected into a turn's system prompt for its conversation, else session, else user; 0 turns the learning-signal loop off"
  },
  'platform.ai.runtime': {
    schema: nonEmpty,
    default: 'demo',
    description:
      'AI runtime that answers turns: `demo` (built-in, offline, deterministic), `openai` (an OpenAI-compatible `/v1/chat/completions` server, streamed), the name of a plugin runtime, or `auto` (the highest-priority available one)'
  },
  'platform.ai.openai.base-url': {
    schema: nonEmpty,
    description:
      'For runtime `openai`: base URL including the version segment, e.g. `http://127.0.0.1:11434/v1`; unset leaves the runtime unavailable'
  },
  'platform.ai.openai.model': {
    schema: nonEmpty,
    description: 'For runtime `openai`: the chat model name; unset leaves the runtime unavailable'
  },
  'platform.ai.openai.api-key': {
    schema: nonEmpty,
    secret: true,
    description: 'For runtime `openai`: bearer token sent to the server, if it needs one'
  },
  'platform.ai.openai.timeout-ms': {
    schema: positiveInt,
    default: 120000,
    description: 'For runtime `openai`: bound of one whole streamed request'
  },
  'platform.ai.openai.idle-timeout-ms': {
    schema: positiveInt,
    default: 15000,
    description:
      'For runtime `openai`: bound of the silence before the first chunk and between two chunks; a server that hangs ends the request with a timeout error'
  },
  'platform.ai.openai.max-concurrency': {
    schema: positiveInt,
    default: 8,
    description: 'For runtime `openai`: requests in flight at once; one more ends at once with a `capacity` error event'
  },
  'platform.ai.max-tool-rounds': {
    schema: positiveInt,
    default: 8,
    description:
      'Rounds of tool calls one agent turn may make (model asks, tools run, results go back); one more ends the turn with an error'
  },
  'platform.ai.agent-tools': {
    schema: { type: 'object', propertyNames: nonEmpty, additionalProperties: strList },
    default: {},
    description:
      "Extra tools for agents: agent name to a list of tool names served on `/platform/mcp`, offered to the model beside the agent's own (its own win a name clash); a name that matches no tool at turn time is left out with a warning"
  },
  'platform.ai.endpoint.auth': {
    schema: { enum: ['open', 'required'] },
    default: 'open',
    description:
      '`open`: anyone may talk to agents over their endpoints (chat and AG-UI; the server binds loopback by default); `required`: a principal (an API token or JWT) is needed, else 401'
  },
  'platform.ai.endpoint.max-connections-per-address': {
    schema: positiveInt,
    default: 64,
    description:
      'Agent connections one client address (IPv6: its /64; loopback too) may hold at once on each of WebSocket, SSE, long-polling, one-shot POST and AG-UI; beyond it 429 (a WebSocket upgrade too)'
  },
  'platform.ai.endpoint.max-message-bytes': {
    schema: positiveInt,
    default: 65_536,
    description:
      'Largest prompt a client may send to an agent (WebSocket frame or POST body; capped by platform.server.body-limit-bytes): beyond it close 1009 or 413'
  },
  'platform.ai.endpoint.max-messages-per-second': {
    schema: { type: 'integer', minimum: 0 },
    default: 20,
    description:
      'Frames (prompts, cancels) one agent-endpoint connection may send per second, sustained (0: no limit); beyond it close 1008 on WebSocket, 429 on POST'
  },
  'platform.ai.endpoint.message-burst': {
    schema: positiveInt,
    default: 40,
    description: 'Frames one agent-endpoint connection may send at once before the per-second rate applies'
  },
  'platform.ai.memory.store': {
    schema: { enum: ['memory', 'lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      'Where conversation memory is kept: `lmdb` (a named database of the data directory, survives restarts), `postgres` (shared by every node on `platform.postgres.url`) or `memory` (in the process, lost on restart). In cluster mode the default is `postgres`'
  },
  'platform.ai.memory.max-messages': {
    schema: positiveInt,
    default: 50,
    description:
      'Messages kept per conversation; the oldest are dropped first, with any tool result whose call was dropped'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof AI_CONFIG_KEYS> {}
}
