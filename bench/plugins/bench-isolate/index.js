// The benchmark's MCP tool in the isolate tier: the same `add` the SDK peers serve.
import { definePlugin, tool } from 'uws-agent-platform/sdk'

export default definePlugin({
  tools: [
    tool({
      name: 'add_isolate',
      description: 'Adds two numbers',
      input: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      run: ({ a, b }) => String(a + b)
    })
  ]
})
