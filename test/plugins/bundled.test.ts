// The bundled plugins of plugins/, loaded by the host from the repository's plugin directory, in
// every sandbox tier this build has (inline by operator grant; isolate, their own tier, with no grant).
import t from 'tap'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startWithPlugins, tempRoot, inlineGrants, statusOf } from './helpers.js'
import { TIERS } from '../../runtime/plugins/tiers.js'
import { installMcp } from '../../runtime/mcp/install.js'
import { startTestPlatform } from '../helpers/platform.js'
import { modern } from '../mcp/helpers.js'

const bundled = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'plugins')
const NAMES = ['demo-agent', 'examples', 'policy-word-limit', 'scope-keywords']
const tiers = (['inline', 'isolate', 'worker'] as const).filter((k) => TIERS[k] !== undefined)

for (const tier of tiers) {
  t.test(`bundled plugins in the ${tier} tier`, async (t) => {
    const grants =
      tier === 'isolate'
        ? {}
        : tier === 'inline'
          ? inlineGrants(...NAMES)
          : Object.fromEntries(NAMES.map((n) => [`platform.plugins.${n}`, { sandbox: 'worker' }]))
    const tp = await startWithPlugins(tempRoot(), { 'platform.plugins.dirs': [bundled], ...grants })
    t.teardown(tp.close)
    const reg = tp.platform.plugins
    for (const n of NAMES)
      t.match(
        statusOf(tp, n),
        { state: 'live', sandbox: tier, version: '1.0.0' },
        `${n}: ${statusOf(tp, n)?.error ?? ''}`
      )

    t.test('examples: pure tools', async (t) => {
      const call = (name: string, args: unknown) => reg.invoke('examples', 'tool', name, args)
      t.same(await call('word_count', { text: 'the quick  brown\nfox' }), { words: 4, characters: 20, lines: 2 })
      t.same(await call('word_count', { text: '' }), { words: 0, characters: 0, lines: 0 })
      t.equal(await call('slugify', { text: 'Héllo, World! 2026' }), 'hello-world-2026')
      t.equal(await call('sum', { numbers: [1, 2, 3.5] }), 6.5)
    })

    t.test('examples: a long-running tool reports progress', async (t) => {
      const tool = reg.tools().find((x) => x.name === 'count_primes')!
      t.equal(tool.longRunning, true)
      const progress: unknown[] = []
      t.same(await tool.call({ limit: 1000, steps: 4, delayMs: 1 }, { onProgress: (p) => progress.push(p) }), {
        limit: 1000,
        primes: 168
      })
      t.equal(progress.length, 4, 'every progress message arrives before the result')
      t.same(progress.at(-1), { progress: 4, total: 4, message: 'step 4 of 4: 168 primes below 1000' })
    })

    t.test('examples: an MCP App tool and its ui:// resource', async (t) => {
      const tool = reg.tools().find((x) => x.name === 'show_counter')!
      t.equal(tool.uiResource, 'ui://examples/counter')
      const ui = reg.resources().find((r) => r.uri === 'ui://examples/counter')!
      t.equal(ui.mimeType, 'text/html;profile=mcp-app')
      t.match(await ui.read(ui.uri), /^<!doctype html>/)
      t.same(await tool.call({ start: 3 }), { count: 3 })
    })

    t.test('examples: a prompt and resources', async (t) => {
      const p = reg.prompts().find((x) => x.name === 'summarize')!
      t.same(p.arguments, [
        { name: 'text', description: 'The text to summarize', required: true },
        { name: 'sentences', description: 'How many sentences', required: false }
      ])
      t.same(await p.get({ text: 'Long text.', sentences: '2' }), [
        {
          role: 'system',
          content: { type: 'text', text: 'You summarize texts in at most 2 sentences, without adding facts.' }
        },
        { role: 'user', content: { type: 'text', text: 'Long text.' } }
      ])
      const about = reg.resources().find((r) => r.uri === 'examples://about')!
      t.equal(about.mimeType, 'text/markdown')
      t.match(await about.read(about.uri), /^# examples/)
      const words = reg.resources().find((r) => r.uri === 'examples://words/{text}')!
      t.equal(await words.read('examples://words/hello%20big%20world'), 'hello\nbig\nworld')
    })

    t.test('demo-agent: a declared scope and its own tools', async (t) => {
      const [agent] = reg.agents()
      t.match(agent, { name: 'demo', plugin: 'demo-agent', version: '1.0.0', headless: false })
      t.match(agent!.scope, {
        purpose: /agent platform/,
        forbiddenTopics: ['medical advice', 'legal advice', 'investment advice', 'writing malware'],
        onBreach: 'POLITE_REDIRECT',
        tier: 'RULE_BASED'
      })
      t.same(
        agent!.tools.map((x) => x.name),
        ['platform_fact', 'topics']
      )
      t.equal(
        await agent!.tools[0]!.call({ topic: 'mcp' }),
        'Tools of plugins are served over MCP on /platform/mcp; an agent has its own endpoint.'
      )
      t.notOk(
        reg.tools().some((x) => x.name === 'platform_fact'),
        "an agent's tools are not on the platform-wide endpoint"
      )
    })

    t.test('policy-word-limit: custom policy types', async (t) => {
      const wl = reg.policyTypes().find((p) => p.type === 'word-limit')!
      const req = (message: string) => ({
        phase: 'PRE_ADMISSION',
        request: {
          message,
          systemPrompt: '',
          model: null,
          userId: null,
          sessionId: null,
          agentId: null,
          conversationId: null,
          metadata: {}
        },
        accumulatedResponse: ''
      })
      t.same(await wl.evaluate(req('one two three'), { max: 3 }), { decision: 'admit' })
      t.same(await wl.evaluate(req('one two three four'), { max: 3 }), {
        decision: 'deny',
        reason: 'message has 4 words, more than the limit of 3'
      })
      t.same(await wl.evaluate(req('one two three four'), { max: 3, prefer: 'summarizer' }), {
        decision: 'prefer',
        preferred: 'summarizer',
        reason: 'message has 4 words, more than 3'
      })
      const sg = reg.policyTypes().find((p) => p.type === 'shout-guard')!
      t.match(await sg.evaluate(req('PLEASE HELP ME NOW'), {}), {
        decision: 'transform',
        request: { message: 'please help me now' }
      })
      t.same(await sg.evaluate(req('Please help'), {}), { decision: 'admit' })
    })

    t.test('scope-keywords: a scope classifier', async (t) => {
      const c = reg.classifiers().find((x) => x.name === 'keyword-overlap')!
      const scope = {
        purpose: 'Answer questions about plugins, sandboxes and MCP tools',
        forbiddenTopics: ['medical advice'],
        similarityThreshold: 0.3
      }
      t.match(await c.classify({ message: 'How do plugins and sandboxes work?' }, scope), { outcome: 'IN_SCOPE' })
      t.match(await c.classify({ message: 'Give me medical advice on headaches' }, scope), {
        outcome: 'OUT_OF_SCOPE',
        reason: 'forbidden topic: medical advice',
        similarity: 0
      })
      t.match(await c.classify({ message: 'Recommend a pasta recipe' }, scope), { outcome: 'OUT_OF_SCOPE' })
    })
  })
}

t.test(
  'examples over MCP: count_primes sends notifications/progress with progress, total and a text message',
  async (t) => {
    const tp = await startTestPlatform(
      { 'platform.plugins.dirs': [bundled] },
      {
        install: async (p) => {
          await installMcp(p)
        }
      }
    )
    t.teardown(tp.close)
    t.equal(tp.platform.plugins.status().find((s) => s.name === 'examples')?.state, 'live')
    const r = await modern(
      `${tp.url}/platform/mcp`,
      'tools/call',
      { name: 'count_primes', arguments: { limit: 1000, steps: 4, delayMs: 1 } },
      { metaExtra: { progressToken: 'p-1' } }
    )
    t.same(r.body.result.structuredContent, { limit: 1000, primes: 168 })
    const progress = r.events.filter((e) => e.method === 'notifications/progress').map((e) => e.params)
    t.same(
      progress.map((p) => [p.progressToken, p.progress, p.total]),
      [
        ['p-1', 1, 4],
        ['p-1', 2, 4],
        ['p-1', 3, 4],
        ['p-1', 4, 4]
      ],
      'one notification per step, in order'
    )
    for (const p of progress) t.match(p.message, /^step \d of 4: \d+ primes below \d+$/)
    t.equal(progress.at(-1).message, 'step 4 of 4: 168 primes below 1000')
  }
)
