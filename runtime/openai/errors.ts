import { defineErrors } from '../contracts/index.js'

/**
 * The OpenAI-compatible API's codes. On `/v1` every code (these and those of the areas below it)
 * reaches the client in OpenAI's error shape, with the code as `error.code`.
 */
export const OPENAI_API_ERRORS = defineErrors({
  OPENAI_INVALID_REQUEST: {
    status: 400,
    message: (p) => `${String(p.detail)}`,
    hint: 'docs/openai-api.md lists the parameters the OpenAI-compatible API accepts'
  },
  OPENAI_UNSUPPORTED: {
    status: 400,
    message: (p) => `'${String(p.param)}' is not supported by this server: ${String(p.detail)}`
  },
  OPENAI_UNKNOWN_MODEL: {
    status: 404,
    message: (p) => `The model '${String(p.model)}' does not exist: a model names an agent (GET /v1/models lists them)`
  },
  OPENAI_RESPONSE_NOT_FOUND: { status: 404, message: (p) => `No response found with id '${String(p.id)}'` },
  OPENAI_WRITE_DISABLED: {
    status: 403,
    message: 'Creating, cancelling and deleting responses is disabled',
    hint: 'Set platform.interactions.http-write-enabled=true to enable'
  },
  OPENAI_AUTH_REQUIRED: {
    status: 401,
    message: 'Authentication required: send Authorization: Bearer <platform token>',
    hint: 'The API key of an OpenAI client is a platform token (platform.auth.tokens) or a JWT'
  },
  OPENAI_TURN_FAILED: {
    status: 500,
    message: (p) => `The agent's turn failed: ${String(p.reason)}`,
    hint: 'The interaction record (GET /api/interactions/{id}) keeps its steps'
  },
  OPENAI_NOT_CANCELLABLE: {
    status: 400,
    message: (p) => `The response '${String(p.id)}' is not in progress: only a response in progress can be cancelled`
  }
})
