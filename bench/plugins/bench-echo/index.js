import { definePlugin, tool } from 'agent-platform/sdk'

export default definePlugin({
  tools: [tool({ name: 'add', description: 'a + b', run: ({ a, b }) => a + b })]
})
