// The OpenAI-compatible API under /v1: no other area imports from it yet, so its door exports nothing.
