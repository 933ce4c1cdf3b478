// Raw log lines, read as text: JSON.parse would silently keep the last of two equal keys.
import t from 'tap'
import { Writable } from 'node:stream'
import { createLogger } from '../../runtime/observability/logger.js'
import { startTestPlatform } from '../helpers/platform.js'
import { installMcp } from '../../runtime/mcp/install.js'
import { modern } from '../mcp/helpers.js'
import { tempRoot, writePlugin } from '../plugins/helpers.js'

/** The keys an object literal repeats, at any depth, in one JSON text (a small strict scanner). */
export function duplicateKeys(text: string): string[] {
  let i = 0
  const dups: string[] = []
  const ws = (): void => {
    while (/\s/.test(text[i] ?? '')) i++
  }
  const str = (): string => {
    const start = i++
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i++
    return JSON.parse(text.slice(start, i)) as string
  }
  const value = (path: string): void => {
    ws()
    const c = text[i]
    if (c === '{') {
      i++
      ws()
      const seen = new Set<string>()
      if (text[i] === '}') {
        i++
        return
      }
      for (;;) {
        ws()
        const k = str()
        ws()
        i++ // ':'
        if (seen.has(k)) dups.push(`${path}${k}`)
        seen.add(k)
        value(`${path}${k}.`)
        ws()
        if (text[i++] === '}') return
      }
    } else if (c === '[') {
      i++
      ws()
      if (text[i] === ']') {
        i++
        return
      }
      for (;;) {
        value(path)
        ws()
        if (text[i++] === ']') return
      }
    } else if (c === '"') {
      str()
    } else {
      while (i < text.length && !/[,}\]\s]/.test(text[i]!)) i++
    }
  }
  value('')
  return dups
}

function rawSink(): { sink: Writable; lines: string[] } {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _e, cb) {
      for (const l of String(chunk).split('\n')) if (l.trim() !== '') lines.push(l)
      cb()
    }
  })
  return { sink, lines }
}

t.test('the scanner finds duplicates at any depth and none in clean JSON', async (t) => {
  t.same(duplicateKeys('{"a":1,"b":{"c":[{"d":1,"d":2}]},"a":"x"}'), ['b.c.d', 'a'])
  t.same(duplicateKeys('{"a":"}\\"{","b":[1,2,{"a":1}],"c":{}}'), [])
})

t.test("child bindings and call fields: no key twice, the bound value and pino's own keys win", async (t) => {
  const { sink, lines } = rawSink()
  const log = createLogger('debug', { destination: sink })
  const child = log.child({ area: 'mcp' }).child({ plugin: 'p1' })
  child.info({ area: 'mcp', plugin: 'p1', n: 1 }, 'same values')
  child.warn({ plugin: 'spoof', level: 99, time: 0, msg: 'forged', service: 'other', shadowed: 1 }, 'forged values')
  log.info({ msg: 'only in the object' })
  await new Promise((resolve) => setImmediate(resolve))
  for (const l of lines) t.same(duplicateKeys(l), [], l)
  const [same, forged, objMsg] = lines.map((l) => JSON.parse(l))
  t.match(same, { area: 'mcp', plugin: 'p1', n: 1, msg: 'same values' })
  t.notOk('shadowed' in same, 'equal values are simply dropped')
  t.match(forged, {
    level: 40,
    plugin: 'p1',
    service: 'agent-platform',
    msg: 'forged values',
    shadowed: { plugin: 'spoof', level: 99, time: 0, msg: 'forged', service: 'other', shadowed: 1 }
  })
  t.equal(objMsg.msg, 'only in the object', 'msg in the object alone is the message')
})

t.test('a running platform: plugin logs of every tier and plugin failures write no key twice', async (t) => {
  const root = tempRoot('log-keys-')
  const grants: Record<string, unknown> = {}
  for (const tier of ['isolate', 'worker', 'inline']) {
    writePlugin(root, `log-${tier}`, {
      manifest: {
        name: `log-${tier}`,
        version: '1.0.0',
        sandbox: tier,
        limits: { timeoutMs: 300, memoryMb: 32, concurrency: 2 }
      },
      index: `import { definePlugin, tool } from 'uws-agent-platform/sdk'
export default definePlugin({ tools: [
  tool({ name: 'talk_${tier}', run: (_a, ctx) => { ctx.log.warn('plugin says', { plugin: 'someone-else', level: 60, msg: 'fake', area: 'x', n: 2 }); return 'ok' } }),
  tool({ name: 'stall_${tier}', run: async () => { await new Promise(() => {}) } })
] })
`
    })
    grants[`platform.plugins.log-${tier}`] = { sandbox: tier }
  }
  const { sink, lines } = rawSink()
  const tp = await startTestPlatform(
    // debug: the plugin-loaded records of the first scan, with keys of their own, are checked too
    { 'platform.plugins.dirs': [root], 'platform.log-level': 'debug', ...grants },
    {
      logDestination: sink,
      pluginHost: { rescanMs: 60_000, debounceMs: 50 },
      install: async (p) => {
        await installMcp(p)
      }
    }
  )
  t.teardown(tp.close)
  const url = `${tp.url}/platform/mcp`
  for (const tier of ['isolate', 'worker', 'inline']) {
    t.equal(
      (await modern(url, 'tools/call', { name: `talk_${tier}`, arguments: {} })).body.result.content[0].text,
      'ok'
    )
    t.equal((await modern(url, 'tools/call', { name: `stall_${tier}`, arguments: {} })).body.result.isError, true)
  }
  t.equal((await modern(url, 'tools/call', { name: 'nope', arguments: {} })).status, 200)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.ok(lines.length > 5, `${lines.length} records written`)
  for (const l of lines) t.same(duplicateKeys(l), [], l.slice(0, 300))
  const said = lines.map((l) => JSON.parse(l)).filter((r) => r.msg === 'plugin says')
  t.same(
    said.map((r) => [r.plugin, r.level, r.n]).sort(),
    [
      ['log-inline', 40, 2],
      ['log-isolate', 40, 2],
      ['log-worker', 40, 2]
    ],
    'each record names the real plugin and level'
  )
  t.ok(
    said.every((r) => r.shadowed?.level === 60 && r.shadowed?.msg === 'fake'),
    "the plugin's own level and msg are kept aside, not written twice"
  )
})
