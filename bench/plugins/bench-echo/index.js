import { definePlugin, tool, runtime } from 'uws-agent-platform/sdk'

export default definePlugin({
  tools: [tool({ name: 'add', description: 'a + b', run: ({ a, b }) => a + b })],
  runtimes: [
    // `message` events of one short text delta each, then done: the per-event cost of a runtime stream
    runtime({
      name: 'bench-stream',
      async *stream(req) {
        const n = Number(req.message)
        for (let i = 0; i < n; i++) yield { type: 'text', delta: 'token ' }
        yield { type: 'done' }
      }
    })
  ]
})
