/** The OpenAI-compatible API under `/v1`; no other area imports from it yet. */
export {}
