// The AI benchmark's agents (bench/scenarios/ai.ts). The demo runtime answers
// `You said: "<message>".`, one token per whitespace-separated word: the scenario's 498-word message
// gives the writer's 500-token reply.
import { definePlugin, agent, runtime } from 'uws-agent-platform/sdk'

export default definePlugin({
  agents: [
    agent({
      name: 'bench-writer',
      description: 'Answers with 500 tokens (demo runtime)',
      systemPrompt: 'Answer at length.'
    }),
    agent({ name: 'bench-short', description: 'Answers with a few tokens (demo runtime)', systemPrompt: 'Be brief.' }),
    agent({
      name: 'bench-fast',
      description: 'Answered by the zero-latency runtime',
      systemPrompt: 'Answer questions about order status.',
      model: 'bench-zero'
    }),
    // the dispatch bench calls the fleet's dispatcher on this coordinator's behalf
    agent({
      name: 'bench-coordinator',
      description: 'Dispatches to bench-fast',
      fleet: ['bench-fast'],
      run: async (turn, ctx) => (await ctx.fleet.call('bench-fast', 'run', { message: turn.message })).text
    })
  ],
  runtimes: [
    runtime({
      name: 'bench-zero',
      description: 'Answers at once: one text event, usage, done',
      capabilities: ['streaming', 'usage', 'system-prompt'],
      models: ['bench-zero'],
      stream: () => [
        { type: 'text', delta: 'Your order shipped.' },
        { type: 'usage', usage: { input: 8, output: 3 } },
        { type: 'done', finishReason: 'stop' }
      ]
    })
  ]
})
