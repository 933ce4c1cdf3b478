// A demo agent: a declared scope (what it is for and what it must refuse), a system prompt, and
// tools served on its own MCP endpoint (/platform/agent/demo/mcp).
import { definePlugin, agent, tool } from 'uws-agent-platform/sdk'

const FACTS = {
  plugins: 'Plugins are folders with a plugin.json and an ES module entry; drop one into plugins/ and it goes live.',
  sandbox: 'Plugins run in an isolate by default; worker and inline tiers need an operator grant.',
  mcp: 'Tools of plugins are served over MCP on /platform/mcp; an agent has its own endpoint.',
  governance: 'Every AI turn and tool call passes declarative policies: admit, transform, deny or prefer.'
}

export default definePlugin({
  agents: [
    agent({
      name: 'demo',
      version: '1.0.0',
      description: 'Answers questions about the agent platform',
      systemPrompt: 'You are the platform guide. Answer briefly and only about the agent platform.',
      scope: {
        purpose: 'Answer questions about the agent platform: plugins, sandboxes, MCP tools and governance policies',
        forbiddenTopics: ['medical advice', 'legal advice', 'investment advice', 'writing malware'],
        onBreach: 'POLITE_REDIRECT',
        redirectMessage: 'I can only help with questions about the agent platform.',
        tier: 'RULE_BASED',
        postResponseCheck: false
      },
      tools: [
        tool({
          name: 'platform_fact',
          description: 'Returns a short fact about a platform topic',
          input: {
            type: 'object',
            properties: { topic: { type: 'string', enum: Object.keys(FACTS) } },
            required: ['topic']
          },
          run: ({ topic }) => FACTS[topic] ?? `no fact about '${topic}'`
        }),
        tool({
          name: 'topics',
          description: 'Lists the topics platform_fact knows',
          run: () => Object.keys(FACTS)
        })
      ]
    })
  ]
})
