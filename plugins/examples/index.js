// The bundled example tool pack: pure tools, a long-running tool, an MCP App, a prompt and
// resources. It needs no permissions, so it runs in the isolate tier with no operator grant.
import { definePlugin, tool, resource, prompt, McpMessage } from 'uws-agent-platform/sdk'
import { COUNTER_HTML } from './counter-app.js'

const words = (text) => (text.trim() === '' ? [] : text.trim().split(/\s+/))

// a pause between chunks where the tier offers timers; plain yielding otherwise
const pause = (ms) =>
  typeof setTimeout === 'function' && ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve()

function countPrimes(from, to) {
  let n = 0
  for (let i = Math.max(2, from); i < to; i++) {
    let prime = true
    for (let d = 2; d * d <= i; d++)
      if (i % d === 0) {
        prime = false
        break
      }
    if (prime) n++
  }
  return n
}

export default definePlugin({
  tools: [
    tool({
      name: 'word_count',
      title: 'Word count',
      description: 'Counts the words, characters and lines of a text',
      input: {
        type: 'object',
        properties: { text: { type: 'string', description: 'The text to measure' } },
        required: ['text']
      },
      run: ({ text }) => ({
        words: words(text).length,
        characters: text.length,
        lines: text === '' ? 0 : text.split('\n').length
      })
    }),
    tool({
      name: 'slugify',
      description: 'Turns a title into a URL slug',
      input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      run: ({ text }) =>
        text
          .normalize('NFKD')
          .replace(/[\u0300-\u036f]/g, '')
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .replace(/^-+|-+$/g, '')
    }),
    tool({
      name: 'sum',
      description: 'Adds a list of numbers',
      input: {
        type: 'object',
        properties: { numbers: { type: 'array', items: { type: 'number' } } },
        required: ['numbers']
      },
      run: ({ numbers }) => numbers.reduce((a, b) => a + b, 0)
    }),
    tool({
      name: 'count_primes',
      title: 'Count primes (long-running)',
      description: 'Counts the primes below a limit in steps, reporting progress; runs as a task',
      longRunning: true,
      input: {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 2, maximum: 5000000 },
          steps: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
          delayMs: { type: 'integer', minimum: 0, maximum: 1000, default: 50 }
        },
        required: ['limit']
      },
      run: async ({ limit, steps = 10, delayMs = 50 }, ctx) => {
        const chunk = Math.ceil(limit / steps)
        let primes = 0
        for (let i = 0; i < steps; i++) {
          if (ctx.signal?.aborted) throw new Error('cancelled')
          primes += countPrimes(i * chunk, Math.min(limit, (i + 1) * chunk))
          // progress/total/message are what an MCP client shows (notifications/progress)
          ctx.progress?.({
            progress: i + 1,
            total: steps,
            message: `step ${i + 1} of ${steps}: ${primes} primes below ${Math.min(limit, (i + 1) * chunk)}`
          })
          await pause(delayMs)
        }
        return { limit, primes }
      }
    }),
    tool({
      name: 'show_counter',
      title: 'Counter (MCP App)',
      description: 'Shows an interactive counter rendered by the host from a ui:// resource',
      uiResource: 'ui://examples/counter',
      input: { type: 'object', properties: { start: { type: 'integer', default: 0 } } },
      run: ({ start = 0 }) => ({ count: start })
    })
  ],
  resources: [
    resource({
      uri: 'ui://examples/counter',
      name: 'counter',
      description: 'The MCP App of show_counter',
      mimeType: 'text/html;profile=mcp-app',
      read: () => COUNTER_HTML
    }),
    resource({
      uri: 'examples://about',
      name: 'about',
      description: 'What this plugin contains',
      mimeType: 'text/markdown',
      read: () =>
        '# examples\n\nTools: word_count, slugify, sum, count_primes (long-running), show_counter (MCP App).\nPrompt: summarize.\n'
    }),
    resource({
      uri: 'examples://words/{text}',
      name: 'words',
      description: 'The words of the text in the URI, one per line',
      read: (uri) => words(decodeURIComponent(uri.slice('examples://words/'.length))).join('\n')
    })
  ],
  prompts: [
    prompt({
      name: 'summarize',
      description: 'Asks for a summary of a text in a given number of sentences',
      arguments: [
        { name: 'text', description: 'The text to summarize' },
        { name: 'sentences', description: 'How many sentences', required: false }
      ],
      get: ({ text, sentences = '3' }) => [
        McpMessage.system(`You summarize texts in at most ${sentences} sentences, without adding facts.`),
        McpMessage.user(text)
      ]
    })
  ]
})
