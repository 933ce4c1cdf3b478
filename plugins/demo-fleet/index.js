// A coordinator: an agent that declares a fleet and dispatches to it from its own run(). Each
// call is a governed turn of the called agent, journaled under the turn's coordination id.
import { definePlugin, agent } from 'agent-platform/sdk'

export default definePlugin({
  agents: [
    agent({
      name: 'critic',
      description: 'Reviews a question about the agent platform',
      systemPrompt: 'You are the critic. Say what a good answer must cover.'
    }),
    agent({
      name: 'panel',
      description: 'Asks the platform guide and the critic at once, then merges their answers',
      fleet: ['demo', { name: 'critic', maxRetries: 1, timeoutMs: 30000 }],
      async run(turn, ctx) {
        const answers = await ctx.fleet.parallel([
          { agent: 'demo', args: { message: turn.message } },
          { agent: 'critic', args: { message: turn.message } }
        ])
        for (const [name, r] of Object.entries(answers))
          ctx.progress({ text: `${name}${r.success ? '' : ' (failed)'}: ${r.text}\n` })
        return ''
      }
    })
  ]
})
