import t from 'tap'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AI, type AiEvent } from '../../runtime/ai/index.js'
import { type AiToolCall } from '../../runtime/ai/runtime.js'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform } from '../helpers/platform.js'
import { collect } from './runtime-contract.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

// the demo runtime against the bundled demo agent as loaded by the platform: its real system
// prompt and tools, the tool run in the plugin's isolate, the result fed back
t.test('demo runtime + bundled demo agent: a sandbox question round-trips through platform_fact', async (t) => {
  const tp = await startTestPlatform({ 'platform.plugins.dirs': [join(REPO, 'plugins')] }, { install: installAreas })
  t.teardown(tp.close)
  const agent = tp.platform.plugins.agents().find((a) => a.name === 'demo')!
  t.ok(agent, 'the bundled demo agent is loaded')
  const runtime = tp.platform.area(AI).activeRuntime()!
  t.equal(runtime.name, 'demo')
  const tools = agent.tools.map((x) => ({
    name: x.name,
    description: x.description,
    inputSchema: x.input as Record<string, unknown>
  }))
  const question = 'Are sandboxes safe?'
  const first = await collect(runtime.stream({ systemPrompt: agent.systemPrompt, message: question, tools }))
  const call = (first.find((e) => e.type === 'tool-call') as Extract<AiEvent, { type: 'tool-call' }> | undefined)
    ?.call as AiToolCall
  t.match(call, { name: 'platform_fact', arguments: { topic: 'sandbox' } })
  const result = await agent.tools.find((x) => x.name === call.name)!.call(call.arguments)
  const text = typeof result === 'string' ? result : JSON.stringify(result)
  t.match(text, /isolate/, 'the tool ran in the plugin')
  const second = await collect(
    runtime.stream({
      systemPrompt: agent.systemPrompt,
      tools,
      history: [
        { role: 'user', content: question },
        { role: 'assistant', content: '', toolCalls: [call] },
        { role: 'tool', toolCallId: call.id, name: call.name, content: text }
      ]
    })
  )
  t.match(
    second
      .filter((e) => e.type === 'text')
      .map((e) => (e as { delta: string }).delta)
      .join(''),
    text,
    'the answer uses the tool result'
  )
})
