// Peer: the Vercel AI SDK streaming a fake model's reply as SSE from node:http. Every POST runs
// `streamText` over `MockLanguageModelV3` (from `ai/test`) whose stream emits the tokens listed in
// the JSON file BENCH_AI_TOKENS_FILE, one `text-delta` part each (paced: see below), and pipes its UI
// message stream to the response (`pipeUIMessageStreamToResponse`: `data: {...}` SSE events,
// `text-delta` with `delta`, then `finish` and `[DONE]`). The ai scenario sends the same tokens
// through the platform's demo runtime (bench/scenarios/ai.ts).
import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'
import { streamText, simulateReadableStream } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'

const tokens = JSON.parse(readFileSync(process.env.BENCH_AI_TOKENS_FILE ?? '', 'utf8'))
const usage = {
  inputTokens: { total: 6, noCache: 6, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: tokens.length, text: tokens.length, reasoning: undefined }
}
const chunks = () => [
  { type: 'stream-start', warnings: [] },
  { type: 'text-start', id: 'text-1' },
  ...tokens.map((delta) => ({ type: 'text-delta', id: 'text-1', delta })),
  { type: 'text-end', id: 'text-1' },
  { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage }
]
// BENCH_AI_PACING=immediate (default): one chunk per event-loop turn (setImmediate), as the
// platform's demo runtime yields after every word and a real model's chunks arrive over time;
// none: every chunk as soon as it is pulled, so node:http coalesces a whole reply into a few writes
const paced = (process.env.BENCH_AI_PACING ?? 'immediate') === 'immediate'
const pacedStream = (parts) => {
  let i = 0
  return new ReadableStream({
    async pull(controller) {
      if (i >= parts.length) {
        controller.close()
        return
      }
      await new Promise((resolve) => setImmediate(resolve))
      controller.enqueue(parts[i++])
    }
  })
}
const model = new MockLanguageModelV3({
  doStream: async () => ({
    stream: paced
      ? pacedStream(chunks())
      : // null delays (the SDK's own default waits a 0 ms timer per chunk)
        simulateReadableStream({ chunks: chunks(), initialDelayInMs: null, chunkDelayInMs: null })
  })
})

// no request or header deadline: with 1 000 paced replies in flight an event-loop turn takes long
// enough that Node's defaults (60 s for headers) reset clients still waiting to be read
const server = createServer({ requestTimeout: 0, headersTimeout: 0 }, (req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(404)
    res.end()
    return
  }
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (d) => {
    body += d
  })
  req.on('end', () => {
    let message
    try {
      message = String(JSON.parse(body).message ?? '')
    } catch {
      res.writeHead(400)
      res.end()
      return
    }
    // the mock records every call; a long run should not grow that list
    model.doStreamCalls.length = 0
    const result = streamText({ model, prompt: message })
    result.pipeUIMessageStreamToResponse(res)
  })
})
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  console.log(`ai-sdk-sse listening on http://127.0.0.1:${server.address().port}`)
})
process.on('SIGTERM', () => {
  server.close()
  process.exit(0)
})
