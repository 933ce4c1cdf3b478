import t from 'tap'
import { streamText } from 'ai'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { ALICE, startOpenAi } from './helpers.js'

// the Vercel AI SDK's OpenAI-compatible provider against the platform: it speaks chat completions
const tp = await startOpenAi()
t.teardown(tp.close)
const platform = createOpenAICompatible({
  name: 'platform',
  baseURL: `${tp.url}/v1`,
  apiKey: ALICE,
  includeUsage: true
})

t.test('streamText streams the demo agent’s answer, with usage and the finish reason', async (t) => {
  const result = streamText({ model: platform('demo'), prompt: 'hello from the ai sdk', maxRetries: 0 })
  let text = ''
  for await (const delta of result.textStream) text += delta
  t.match(text, /You said: "hello from the ai sdk"/)
  t.equal(await result.finishReason, 'stop')
  const usage = await result.usage
  t.ok((usage.outputTokens ?? 0) > 0, 'output tokens counted')
  t.equal(usage.totalTokens, (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0))
})

t.test('a system prompt and a multi-message conversation', async (t) => {
  const result = streamText({
    model: platform('demo'),
    system: 'Answer briefly.',
    messages: [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'second' }
    ],
    maxRetries: 0
  })
  const text = await result.text
  t.match(text, /You said: "second"\./)
  // the demo runtime no longer reads a prompt back: the turn's recorded input shows the system prompt went in
  const { id } = await result.response
  const recorded = await fetch(`${tp.url}/api/interactions/${id}`, { headers: { authorization: `Bearer ${ALICE}` } })
  t.match(JSON.stringify(await recorded.json()), /Answer briefly\./, 'the system prompt reached the turn')
})

t.test('an unknown model is the SDK’s API error, status 404', async (t) => {
  const result = streamText({ model: platform('nope'), prompt: 'hi', maxRetries: 0, onError: () => {} })
  let caught: any
  try {
    for await (const part of result.fullStream) if (part.type === 'error') caught = part.error
  } catch (err) {
    caught = err
  }
  t.match(caught, { statusCode: 404 })
})
