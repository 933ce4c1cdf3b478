// The AI benchmark's agents (bench/scenarios/ai.ts). The demo runtime answers
// `You said: "<message>".`, one token per whitespace-separated word: the scenario's 498-word message
// gives the writer's 500-token reply. `bench-burst` answers the same deltas all at once (a model
// whose network chunk holds the whole reply), against the AI SDK's mock that does the same.
import { definePlugin, agent, runtime } from 'uws-agent-platform/sdk'

export default definePlugin({
  agents: [
    agent({
      name: 'bench-writer',
      description: 'Answers with 500 tokens (demo runtime)',
      systemPrompt: 'Answer at length.'
    }),
    agent({
      name: 'bench-writer-burst',
      description: "The writer's 500 tokens, every delta at once",
      systemPrompt: 'Answer at length.',
      model: 'bench-burst'
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
      name: 'bench-burst',
      description: "The demo runtime's reply, every delta in one array",
      capabilities: ['streaming', 'usage', 'system-prompt'],
      models: ['bench-burst'],
      stream: (request) => {
        // the demo runtime's cut: each word with the whitespace after it
        const deltas = `You said: "${request.message ?? ''}".`.split(/(?<=\s)/)
        return [
          ...deltas.map((delta) => ({ type: 'text', delta })),
          { type: 'usage', usage: { input: deltas.length, output: deltas.length } },
          { type: 'done', finishReason: 'stop' }
        ]
      }
    }),
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
