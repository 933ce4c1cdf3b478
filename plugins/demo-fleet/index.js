// A coordinator: an agent that declares a fleet and dispatches to it from its own run(). Each
// call is a governed turn of the called agent, journaled under the turn's coordination id.
import { definePlugin, agent } from 'uws-agent-platform/sdk'

// the platform guide's scope: the panel and its critic answer the same questions
const scope = {
  purpose: 'Answer questions about the agent platform: plugins, sandboxes, MCP tools and governance policies',
  forbiddenTopics: ['medical advice', 'legal advice', 'investment advice', 'writing malware'],
  onBreach: 'POLITE_REDIRECT',
  redirectMessage: 'I can only help with questions about the agent platform.',
  tier: 'RULE_BASED',
  postResponseCheck: false
}

export default definePlugin({
  agents: [
    agent({
      name: 'critic',
      description: 'Says what a good answer to a platform question must cover',
      systemPrompt: 'You are the critic. Say what a good answer must cover.',
      scope
    }),
    agent({
      name: 'panel',
      description: 'Asks the platform guide and the critic at once, then merges their answers',
      scope,
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
