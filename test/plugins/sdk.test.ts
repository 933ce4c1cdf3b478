import t from 'tap'
import {
  definePlugin,
  tool,
  resource,
  prompt,
  agent,
  policyType,
  classifier,
  embedder,
  McpMessage,
  admit,
  transform,
  deny,
  prefer
} from 'uws-agent-platform/sdk'
import { describePlugin } from 'uws-agent-platform/sdk/dispatch'

const run = () => 1

t.test('definePlugin refuses mistakes at load with a clear message', async (t) => {
  t.throws(() => definePlugin({ tool: [] } as never), {
    message:
      "definePlugin: unknown key 'tool' (expected tools, resources, prompts, agents, policyTypes, classifiers, embedders, runtimes)"
  })
  t.throws(() => definePlugin({ tools: {} } as never), { message: "definePlugin: 'tools' must be an array" })
  t.throws(() => definePlugin({ tools: [{ name: 'x', run }] } as never), {
    message: 'definePlugin: tools[0] must be made with tool({...})'
  })
  t.throws(() => definePlugin({ tools: [resource({ uri: 'a://b', read: run })] } as never), {
    message: 'definePlugin: tools[0] must be made with tool({...})'
  })
  t.throws(() => definePlugin({ tools: [tool({ name: 'x', run }), tool({ name: 'x', run })] }), {
    message: "definePlugin: two tools share the name 'x'"
  })
  t.throws(() => definePlugin({ agents: [agent({ name: 'a', tools: [{ name: 't' } as never] })] }), {
    message: "agent 'a': tools[0] must be made with tool({...})"
  })
  t.throws(() => tool({ name: 'x' } as never), { message: "tool 'x': 'run' must be a function" })
})

t.test('every helper makes an item the host can describe', async (t) => {
  const d = describePlugin(
    definePlugin({
      tools: [tool({ name: 't', run, uiResource: 'ui://p/t', longRunning: true })],
      resources: [resource({ uri: 'ui://p/t', mimeType: 'text/html;profile=mcp-app', read: () => '<p>' })],
      prompts: [
        prompt({
          name: 'p',
          arguments: [{ name: 'x' }, { name: 'y', required: false }],
          get: () => [McpMessage.system('s'), McpMessage.user('u')]
        })
      ],
      agents: [
        agent({ name: 'a', scope: { purpose: 'help', forbiddenTopics: ['x'] }, tools: [tool({ name: 'at', run })] })
      ],
      policyTypes: [policyType({ type: 'pt', evaluate: () => admit() })],
      classifiers: [classifier({ name: 'c', classify: () => ({ outcome: 'IN_SCOPE', reason: '' }) })],
      embedders: [embedder({ name: 'e', embed: (texts) => texts.map(() => [0]) })]
    })
  )
  t.match(d.tools[0], { name: 't', longRunning: true, uiResource: 'ui://p/t' })
  t.same(d.prompts[0]!.arguments, [
    { name: 'x', description: '', required: true },
    { name: 'y', description: '', required: false }
  ])
  t.same(d.agents[0]!.scope, { purpose: 'help', forbiddenTopics: ['x'] })
  t.same([d.policyTypes[0]!.type, d.classifiers[0]!.name, d.embedders[0]!.name], ['pt', 'c', 'e'])
})

t.test('messages and decisions', async (t) => {
  t.same(McpMessage.system('s'), { role: 'system', content: { type: 'text', text: 's' } })
  t.same(McpMessage.user('u'), { role: 'user', content: { type: 'text', text: 'u' } })
  t.same(admit(), { decision: 'admit' })
  t.same(deny('no'), { decision: 'deny', reason: 'no' })
  t.same(prefer('other', 'why'), { decision: 'prefer', preferred: 'other', reason: 'why' })
  const req = { message: 'm', metadata: {} }
  t.same(transform(req), { decision: 'transform', request: req })
})

t.test('agent: endpoint, headless, model and run are checked and described', async (t) => {
  t.throws(() => agent({ name: 'a', model: '' }), { message: "agent 'a': 'model' must be a non-empty string" })
  t.throws(() => agent({ name: 'a', headless: 'yes' as never }), { message: "agent 'a': 'headless' must be a boolean" })
  t.throws(() => agent({ name: 'a', endpoint: 3 as never }), { message: "agent 'a': 'endpoint' must be a string" })
  t.throws(() => agent({ name: 'a', run: 'x' as never }), { message: "agent 'a': 'run' must be a function" })
  t.throws(() => agent({ name: 'a', broadcastReply: 'yes' as never }), {
    message: "agent 'a': 'broadcastReply' must be a boolean"
  })
  const d = describePlugin(
    definePlugin({
      agents: [
        agent({ name: 'a', endpoint: '/x', headless: true, model: 'demo', run: () => 'hi', broadcastReply: true }),
        agent({ name: 'b' })
      ]
    })
  )
  t.match(d.agents[0], { name: 'a', endpoint: '/x', headless: true, model: 'demo', hasRun: true, broadcastReply: true })
  t.notOk(
    'model' in d.agents[1]! || 'hasRun' in d.agents[1]! || 'broadcastReply' in d.agents[1]!,
    'absent fields stay absent'
  )
})
