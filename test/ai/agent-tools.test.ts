import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { installAreas, loadConfig } from '../../runtime/areas.js'
import { getMcp } from '../../runtime/mcp/index.js'
import { startTestPlatform } from '../helpers/platform.js'
import { OpenAiServer, deltaChunk, sseEvents, usageChunk } from '../helpers/openai-server.js'
import { agentSocket, postTurn, type Frame } from './agent-clients.js'

// `platform.ai.agent-tools`: the demo agent (its own tools platform_fact and topics) also gets
// tools of the bundled examples plugin, served on /platform/mcp and running in their isolate.
const REPO = fileURLToPath(new URL('../../', import.meta.url))
const PATH = '/platform/agent/demo'
const dir = mkdtempSync(join(tmpdir(), 'agent-tools-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const rules = join(dir, 'tools.yaml')
writeFileSync(
  rules,
  `version: "1"
name: tool-rules
rules:
  - name: no-slugs
    condition: {field: tool_name, operator: eq, value: slugify}
    action: deny
    priority: 10
    message: no slugs today
defaults:
  action: allow
`
)

const server = await new OpenAiServer().start()
t.teardown(() => server.close())
const tp = await startTestPlatform(
  {
    'platform.plugins.dirs': [join(REPO, 'plugins')],
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': server.url,
    'platform.ai.openai.model': 'test-model',
    'platform.ai.governance.policy-files': [rules],
    'platform.ai.agent-tools': { demo: ['word_count', 'slugify', 'topics', 'ghost_tool'], dmeo: ['sum'] }
  },
  { install: installAreas }
)
t.teardown(tp.close)
const mcp = getMcp(tp.platform)!

/** The model: the scripted tool calls on a user message, then `done` once the results are back. */
function script(calls: { name: string; args: unknown }[]): void {
  server.chat = (body: any) => {
    if (body.messages.at(-1).role === 'tool') return text('done')
    return {
      stream: sseEvents([
        deltaChunk({
          tool_calls: calls.map((c, i) => ({
            index: i,
            id: `call_${i}`,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.args) }
          }))
        }),
        deltaChunk({}, 'tool_calls'),
        usageChunk(10, 5)
      ])
    }
  }
}
function text(s: string) {
  return { stream: sseEvents([deltaChunk({ content: s }, 'stop'), usageChunk(4, 2)]) }
}
/** The tools the model was offered on the first request since the last reset: name to description. */
const offered = (): Record<string, string> =>
  Object.fromEntries(
    (server.on('/chat/completions')[0]?.tools ?? []).map((x: any) => [x.function.name, x.function.description])
  )
const toolFrames = (frames: Frame[]) =>
  frames
    .filter((f) => typeof f.event === 'string' && f.event.startsWith('tool-'))
    .map((f) => ({ event: f.event, ...f.data }))
const ghostWarnings = () => tp.logs.filter((l) => String(l.msg).includes("lists tool 'ghost_tool' for agent 'demo'"))

t.test('listed tools of another plugin are offered and run like the agent’s own', async (t) => {
  // a platform tool that clashes with the agent's own `topics`: the agent's wins
  t.teardown(mcp.registerTool({ name: 'topics', description: 'Platform-wide topics', handler: () => 'not mine' }))
  script([
    { name: 'word_count', args: { text: 'one two three' } },
    { name: 'slugify', args: { text: 'Hello World' } },
    { name: 'topics', args: {} },
    { name: 'sum', args: { numbers: [1, 2] } }
  ])
  server.reset()
  const s = await agentSocket(tp.url, PATH)
  t.teardown(() => s.ws.close())
  const frames = await s.turn('count these words')
  const names = offered()
  t.same(
    Object.keys(names).sort(),
    ['platform_fact', 'slugify', 'topics', 'word_count'],
    'own and listed, nothing else'
  )
  t.equal(names.topics, 'Lists the topics platform_fact knows', "the agent's own tool wins the name clash")
  t.match(toolFrames(frames), [
    { event: 'tool-start', toolName: 'word_count' },
    { event: 'tool-result', toolName: 'word_count', result: '{"words":3,"characters":13,"lines":1}' },
    { event: 'tool-start', toolName: 'slugify' },
    { event: 'tool-error', toolName: 'slugify', error: /denied by policy tool-rules: no slugs today/ },
    { event: 'tool-start', toolName: 'topics' },
    { event: 'tool-result', toolName: 'topics', result: '["plugins","sandbox","mcp","governance"]' },
    { event: 'tool-start', toolName: 'sum' },
    { event: 'tool-error', toolName: 'sum', error: "unknown tool 'sum'" }
  ])
  t.match(frames.at(-1), { event: 'complete', data: { summary: 'done' } })
  const results = server.on('/chat/completions')[1].messages.filter((m: any) => m.role === 'tool')
  t.match(
    results.map((m: any) => m.content),
    [/"words":3/, /^error: tool call denied/, /plugins/, /^error: unknown tool 'sum'/],
    'the model saw every outcome'
  )
})

t.test('the same over SSE: a one-shot POST turn calls a listed tool', async (t) => {
  script([{ name: 'word_count', args: { text: 'a b' } }])
  const { status, frames } = await postTurn(tp.url, PATH, 'count')
  t.equal(status, 200)
  t.match(toolFrames(frames), [
    { event: 'tool-start', toolName: 'word_count' },
    { event: 'tool-result', toolName: 'word_count', result: /"words":2/ }
  ])
  t.match(frames.at(-1), { event: 'complete', data: { summary: 'done' } })
})

t.test('a listed name that matches no tool is left out, warned about once, and follows hot changes', async (t) => {
  script([])
  server.chat = () => text('hi')
  for (let i = 0; i < 3; i++) {
    server.reset()
    const { frames } = await postTurn(tp.url, PATH, 'hello')
    t.match(frames.at(-1), { event: 'complete', data: { summary: 'hi' } })
    t.notOk('ghost_tool' in offered())
  }
  t.equal(ghostWarnings().length, 1, 'one warning for three turns')
  t.match(ghostWarnings()[0], { level: 40, agent: 'demo', tool: 'ghost_tool' })

  // the tool appears on /platform/mcp: offered and callable from the next turn on
  const off = mcp.registerTool({ name: 'ghost_tool', description: 'Appears later', handler: () => 'boo' })
  script([{ name: 'ghost_tool', args: {} }])
  server.reset()
  const { frames } = await postTurn(tp.url, PATH, 'call the ghost')
  t.equal(offered().ghost_tool, 'Appears later')
  t.match(toolFrames(frames), [
    { event: 'tool-start' },
    { event: 'tool-result', toolName: 'ghost_tool', result: 'boo' }
  ])

  // and goes again: left out, and warned about anew
  off()
  server.chat = () => text('hi')
  server.reset()
  await postTurn(tp.url, PATH, 'hello')
  t.notOk('ghost_tool' in offered())
  t.equal(ghostWarnings().length, 2)
})

t.test('an agent name no loaded plugin contributes is a warning at start, not an error', async (t) => {
  const warned = tp.logs.filter((l) => String(l.msg).includes('platform.ai.agent-tools lists tools for agent'))
  t.equal(warned.length, 1)
  t.match(warned[0], { level: 40, agent: 'dmeo', known: ['demo'] })
})

t.test('a malformed value fails at start with the config loader’s message', async (t) => {
  await t.rejects(
    startTestPlatform({ 'platform.ai.agent-tools': { demo: 'word_count' } }, { install: installAreas }),
    /config key 'platform\.ai\.agent-tools' at demo must be array/
  )
  t.throws(
    () => loadConfig({ env: { PLATFORM_AI_AGENT_TOOLS: 'demo=word_count' }, cwd: dir }),
    /config key 'platform\.ai\.agent-tools' must be object; got "demo=word_count" \(from environment PLATFORM_AI_AGENT_TOOLS\)/
  )
  const cfg = loadConfig({ env: { PLATFORM_AI_AGENT_TOOLS: '{"demo":["word_count"]}' }, cwd: dir })
  t.same(cfg.get('platform.ai.agent-tools'), { demo: ['word_count'] }, 'JSON in the environment')
})
