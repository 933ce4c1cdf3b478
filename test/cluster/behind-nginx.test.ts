// Three platform processes behind nginx, set up as docs/cluster.md says (its configuration block and
// its `platform serve` lines, run as written with this file's ports) and with the nginx configuration
// of docs/examples/nginx-cluster.conf, on one PostgreSQL, one Redis and one nginx shared by the file:
// rooms across nodes, an interaction created, streamed and cancelled through nginx, Redis stopped
// mid-traffic, `kill -9` of a run's node, the kill switch across nodes and restarts, PostgreSQL
// stopped and back.
import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'pg'
import WebSocket from 'ws'
import { parse } from 'yaml'
import { ROOT, readBlocks } from '../helpers/doc-pages.js'
import { matchOutput, rewriteHost, runCurl, steps } from '../helpers/doc-shell.js'
import { freePort, testNginx } from '../helpers/nginx.js'
import { OpenAiServer, deltaChunk, sseEvents } from '../helpers/openai-server.js'
import { testPostgres } from '../helpers/postgres.js'
import { testRedis } from '../helpers/redis.js'
import { wsMember, type Frame, type WsMember } from '../transport/clients.js'

// three node processes started four times over, a Postgres cluster, Redis and nginx: a loaded
// 2-core machine needs more than the default 30 s
t.setTimeout(180_000)

const SECTION = 'Three nodes behind nginx, step by step'
const page = readBlocks('docs/cluster.md').filter((b) => b.heading === SECTION)
const configBlock = page.find((b) => b.lang === 'yaml')
const shellBlock = page.find((b) => b.lang === 'sh')
if (configBlock === undefined || shellBlock === undefined)
  throw new Error(`docs/cluster.md: the section "${SECTION}" must hold the nodes' YAML and the shell steps`)
const documented = steps(shellBlock.text, shellBlock.line)
const serveLines = documented.filter((s) => s.kind === 'platform').map((s) => s.command.replace(/\s*&$/, ''))
// checked here, not with an assertion: an assertion before the first subtest lets tap end the file
// while the nodes start
if (serveLines.length !== 3) throw new Error(`docs/cluster.md:${shellBlock.line}: the steps start three nodes`)
const TOKEN = String((parse(configBlock.text) as any).platform.auth.tokens[0].token)
const LEASE_MS = 2000

/** Polls `check` until it holds; fails naming `what` after `ms` (a hang is a reason, not the file's timeout). */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Polls for at most `ms`: true once `check` held. */
async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const end = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, 10))
  }
}

interface Node {
  id: string
  port: number
  url: string
  args: string[]
  proc?: ChildProcess
}

const pg = await testPostgres(t)
const redis = pg === undefined ? undefined : await testRedis(t)
const ports = [await freePort(), await freePort(), await freePort()]
const nginx = redis === undefined ? undefined : await testNginx(t, ports)

if (pg !== undefined && redis !== undefined && nginx !== undefined) {
  const model = await new OpenAiServer().start()
  t.teardown(() => model.close())
  const dbUrl = await pg.database(t)
  const scratch = mkdtempSync(join(tmpdir(), 'platform-cluster-nginx-'))
  mkdirSync(join(scratch, 'plugins'))
  writeFileSync(
    join(scratch, configBlock.directive.opts.file ?? 'cluster.yaml'),
    configBlock.text.replace(/redis:\/\/\S+/, redis.url).replace(/postgres:\/\/\S+/, dbUrl)
  )
  // what the documented nodes need beyond the page for this file: its model, a short lease
  const extra = {
    'platform.cluster.lease-ms': LEASE_MS,
    'platform.interactions.text-coalesce-ms': 0,
    'platform.ai.runtime': 'openai',
    'platform.ai.openai.base-url': model.url,
    'platform.ai.openai.model': 'test-model',
    'platform.transport.rooms.max-messages-per-second': 1000,
    'platform.transport.rooms.message-burst': 1000,
    // nginx keeps idle connections to every node: a restart need not wait the default 4 s for them
    'platform.server.shutdown-timeout-ms': 500
  }
  const extraArgs = [
    '--log-level',
    'warn',
    ...Object.entries(extra).flatMap(([k, v]) => ['--set', `${k}=${String(v)}`])
  ]
  // nothing of the runner's settings (PLATFORM_*, tap's loaders in NODE_OPTIONS) reaches the nodes
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('PLATFORM_') && k !== 'NODE_OPTIONS')
  )
  const nodes: Node[] = serveLines.map((line, i) => {
    const args = line.split(/\s+/).slice(1)
    const port = args.indexOf('--port')
    const id = /platform\.cluster\.node-id=(\S+)/.exec(line)?.[1]
    if (port < 0 || id === undefined || ports[i] === undefined)
      throw new Error(`docs/cluster.md:${shellBlock.line}: each of three nodes starts with --port and its node id`)
    args[port + 1] = String(ports[i])
    return { id, port: ports[i]!, url: `http://127.0.0.1:${ports[i]}`, args: [...args, ...extraArgs] }
  })

  /** Starts the node's process as the page does; resolves once it serves and has reached Redis. */
  const start = async (n: Node): Promise<void> => {
    const proc = spawn(process.execPath, ['--no-node-snapshot', join(ROOT, 'bin', 'platform.js'), ...n.args], {
      cwd: scratch,
      env,
      stdio: ['ignore', 'ignore', 'pipe']
    })
    n.proc = proc
    await new Promise<void>((resolve, reject) => {
      let err = ''
      proc.stderr!.on('data', (d: Buffer) => {
        err = (err + d.toString()).slice(-4000)
        if (err.includes('platform listening on')) resolve()
      })
      proc.once('exit', (code) => reject(new Error(`${n.id} exited ${String(code)} before it served: ${err}`)))
    })
    let last: unknown
    await until(async () => {
      const r = await ready(n)
      last = r
      return r.body.checks?.backplane === 'UP'
    }, `${n.id} reached Redis`).catch((e: Error) => {
      throw new Error(`${e.message}: /readyz answered ${JSON.stringify(last)}`)
    })
  }
  const stop = async (n: Node, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    const p = n.proc
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve())
      p.kill(signal)
    })
  }
  const alive = (n: Node) => n.proc !== undefined && n.proc.exitCode === null && n.proc.signalCode === null
  t.teardown(async () => {
    await Promise.all(nodes.map((n) => stop(n, 'SIGKILL')))
    rmSync(scratch, { recursive: true, force: true })
  })

  const api = async (method: string, path: string, body?: unknown, base = nginx.url) => {
    const r = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await r.text()
    return { status: r.status, body: text === '' ? undefined : (JSON.parse(text) as any) }
  }
  async function ready(n: Node): Promise<{ status: number; body: any }> {
    try {
      return await api('GET', '/readyz', undefined, n.url)
    } catch {
      return { status: 0, body: {} }
    }
  }
  const ownerOf = async (id: string): Promise<string> => {
    const c = new Client({ connectionString: dbUrl })
    await c.connect()
    try {
      const r = await c.query<{ owner_node: string }>('SELECT owner_node FROM platform_interactions WHERE id = $1', [
        id
      ])
      return r.rows[0]!.owner_node
    } finally {
      await c.end()
    }
  }
  /** Which node nginx passed a finished request to, from its access log. */
  const answeredBy = (method: string, uri: string): string | undefined => {
    for (const line of nginx.accessLog()) {
      const [addr, , m, u] = line.split(' ')
      if (m === method && u === uri) return nodes.find((n) => addr === `127.0.0.1:${n.port}`)?.id
    }
    return undefined
  }

  await Promise.all(nodes.map(start))

  /** Turns of `deltas` text deltas, each held before delta `pause` until `release()` (or the test's end). */
  const hold = (t: Test, deltas: number, pause: number): { release: () => void } => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    t.teardown(release)
    model.chat = () => ({
      stream: sseEvents([
        ...Array.from({ length: deltas }, (_, i) => deltaChunk({ content: `d${i} ` })),
        deltaChunk({}, 'stop')
      ]),
      pauseAt: { index: pause, until: held }
    })
    return { release }
  }

  t.test('the documented setup answers through nginx', async (t) => {
    const bound = new Map<string, string>()
    const curls = documented.filter((s) => s.kind === 'curl')
    t.ok(curls.length >= 1, 'the page checks the cluster with curl')
    for (const s of curls) {
      const ran = await runCurl(rewriteHost(s.command, Number(new URL(nginx.url).port)), {}, scratch)
      t.equal(ran.status, s.status ?? 200, `${s.command}: ${ran.output}`)
      for (const e of s.expected) t.equal(matchOutput(e, ran.output, bound), undefined, `${s.command} prints ${e}`)
    }
  })

  t.test('room members joined through nginx land on different nodes and hear each other in order', async (t) => {
    const members: WsMember[] = []
    for (let i = 0; i < 3; i++) members.push(await wsMember(nginx.url, 'lobby'))
    t.teardown(() => {
      for (const m of members) m.ws.close()
    })
    // a joined frame lists the members of its own node only: none of the earlier ones here
    t.same(
      members.map((m, i) => members.slice(0, i).filter((o) => m.joined.members.includes(o.uuid)).length),
      [0, 0, 0],
      'round-robin, no affinity: each member on another node'
    )
    for (const from of members) for (const to of members) if (from !== to) await linked(from, to)
    for (let i = 0; i < 20; i++) for (const m of members) speak(m, { i })
    const heard = (m: WsMember, sender: WsMember): number[] =>
      m.inbox.all
        .filter((f: Frame) => f.type === 'message' && f.from === sender.uuid && typeof f.data?.i === 'number')
        .map((f: Frame) => f.data.i as number)
    const all = Array.from({ length: 20 }, (_, i) => i)
    await until(
      () => members.every((m) => members.every((s) => heard(m, s).length === 20)),
      'every member heard 20 messages from each'
    )
    for (const [a, m] of members.entries())
      for (const [b, s] of members.entries()) t.same(heard(m, s), all, `member ${a} heard member ${b} in order`)
  })

  t.test('an interaction created, streamed and cancelled through nginx, each by another node', async (t) => {
    hold(t, 30, 3)
    const created = await api('POST', '/api/interactions', { message: 'long job', background: true })
    t.equal(created.status, 200)
    const id = created.body.id as string
    const stream = sse(`${nginx.url}/platform/interactions-stream?id=${id}`)
    await until(() => stream.steps().length >= 3, 'the stream through nginx carries live steps')
    const cancel = await api('POST', `/api/interactions/${id}/cancel`)
    t.same([cancel.status, cancel.body], [200, { status: 'cancel requested' }])
    await until(() => stream.ended, 'the stream ends')
    t.same(
      stream.frames.filter((f) => f.type === 'interaction-terminal').map((f) => f.status),
      ['CANCELLED'],
      'one terminal frame'
    )
    const stored = (await api('GET', `/api/interactions/${id}`)).body
    t.equal(stored.status, 'CANCELLED')
    t.same(
      stream.steps(),
      stored.steps.map((s: { seq: number }) => s.seq),
      'every stored step once, in order'
    )
    const by: (string | undefined)[] = []
    await until(() => {
      by.splice(
        0,
        3,
        answeredBy('POST', '/api/interactions'),
        answeredBy('GET', `/platform/interactions-stream?id=${id}`),
        answeredBy('POST', `/api/interactions/${id}/cancel`)
      )
      return by.every((n) => n !== undefined)
    }, 'nginx logged the three requests')
    t.equal(by[0], await ownerOf(id), 'the node that took the create runs it')
    t.equal(new Set(by).size, 3, `created on ${by[0]}, streamed from ${by[1]}, cancelled on ${by[2]}`)
  })

  t.test('Redis stopped and restarted mid-traffic: local delivery goes on, no crash, cross-node resumes', async (t) => {
    const [a, b] = nodes as [Node, Node]
    const speaker = await wsMember(a.url, 'traffic')
    const local = await wsMember(a.url, 'traffic')
    const remote = await wsMember(b.url, 'traffic')
    t.teardown(() => {
      for (const m of [speaker, local, remote]) m.ws.close()
    })
    await linked(speaker, remote)
    let tick = 0
    const ticker = setInterval(() => speak(speaker, { tick: ++tick }), 20)
    t.teardown(() => clearInterval(ticker))
    const ticks = (m: WsMember) => m.inbox.all.filter((f) => typeof f.data?.tick === 'number').map((f) => f.data.tick)

    await redis.stop()
    for (const n of nodes)
      await until(async () => (await ready(n)).body.checks?.backplane === 'DEGRADED', `${n.id} reports Redis down`)
    const down = await ready(a)
    t.match(down, { status: 200, body: { status: 'DEGRADED' } }, 'a node stays in the load balancer')
    const sinceDown = tick
    await until(() => ticks(local).some((k) => k > sinceDown + 5), 'the member on the same node keeps hearing')
    t.ok(nodes.every(alive), 'no node crashed')

    await redis.start()
    for (const n of nodes)
      await until(async () => (await ready(n)).body.checks?.backplane === 'UP', `${n.id} has Redis back`)
    const sinceBack = tick
    await until(() => ticks(remote).some((k) => k > sinceBack), 'the member on the other node hears again')
    clearInterval(ticker)
    const after = ticks(remote).filter((k) => k > sinceBack)
    t.same(
      after,
      [...after].sort((x, y) => x - y),
      'in order'
    )
  })

  t.test(
    'a kill switch armed through nginx denies on every node within 1 s and survives a restart of all',
    async (t) => {
      const denies = async (n: Node) => {
        const r = await api(
          'POST',
          '/api/admin/governance/check',
          { agent_id: 'a', action: 'chat', context: {} },
          n.url
        )
        return r.body.allowed === false && r.body.reason === 'incident 7'
      }
      const armed = await api('POST', '/api/admin/governance/kill-switch/arm', { reason: 'incident 7' })
      t.equal(armed.status, 200)
      for (const n of nodes) t.ok(await within(1000, () => denies(n)), `${n.id} denies within a second`)

      await Promise.all(nodes.map((n) => stop(n)))
      await Promise.all(nodes.map(start))
      for (const n of nodes) t.ok(await denies(n), `${n.id} is still armed after every node restarted`)

      t.equal((await api('POST', '/api/admin/governance/kill-switch/disarm', {})).status, 200)
      for (const n of nodes) await until(async () => !(await denies(n)), `${n.id} disarmed`)
    }
  )

  const outage = pg.outage
  if (outage === undefined)
    t.skip('PostgreSQL stopped: PLATFORM_TEST_PG_URL names a server this file must not stop', () => {})
  else
    t.test('PostgreSQL stopped: 503 with a hint through nginx, readiness degraded; back: recovery', async (t) => {
      model.chat = () => ({ stream: sseEvents([deltaChunk({ content: 'kept' }), deltaChunk({}, 'stop')]) })
      const kept = await api('POST', '/api/interactions', { message: 'before the outage' })
      t.equal(kept.status, 200)

      await outage.pause()
      const write = await api('POST', '/api/interactions', { message: 'during the outage' })
      t.equal(write.status, 503, 'a write is refused with 503')
      t.match(write.body, {
        code: 'PLT_ERR_STORE_UNAVAILABLE',
        error: /^PostgreSQL at 127\.0\.0\.1:\d+\/\w+ cannot be reached$/,
        hint: /GET \/readyz/
      })
      const read = await api('GET', `/api/interactions/${kept.body.id}`)
      t.match(read, { status: 503, body: { code: 'PLT_ERR_STORE_UNAVAILABLE' } }, 'a read is refused the same way')
      for (const n of nodes)
        await until(
          async () => (await ready(n)).body.checks?.['interactions-store'] === 'DEGRADED',
          `${n.id} reports PostgreSQL down`
        )
      t.match(await ready(nodes[0]!), { status: 200, body: { status: 'DEGRADED' } }, 'degraded, still in the balancer')
      t.ok(nodes.every(alive), 'no node crashed')

      await outage.resume()
      for (const n of nodes)
        await until(async () => (await ready(n)).body.status === 'UP', `${n.id} recovers without a restart`)
      const again = await api('GET', `/api/interactions/${kept.body.id}`)
      t.match(again, { status: 200, body: { status: 'COMPLETED' } }, 'what was acknowledged is kept')
      t.equal((await api('POST', '/api/interactions', { message: 'after' })).status, 200, 'writes work again')
    })

  t.test('kill -9 of the node running a run: FAILED, node lost; viewers elsewhere get one terminal', async (t) => {
    hold(t, 30, 4)
    const created = await api('POST', '/api/interactions', { message: 'doomed', background: true })
    const id = created.body.id as string
    const ownerId = await ownerOf(id)
    const doomed = nodes.find((n) => n.id === ownerId)!
    // the stream object itself, not a copy: `done` is set on it when the socket closes
    const viewers = nodes.filter((n) => n !== doomed).map((n) => Object.assign(watch(n.url, id), { node: n.id }))
    await until(() => viewers.every((v) => stepsOf(v.frames).length >= 4), 'both viewers see live steps')
    await stop(doomed, 'SIGKILL')
    // as on one node: the terminal frame, then the server closes the socket
    for (const v of viewers) await until(() => v.done, `${v.node} closes its viewer's socket`)
    const stored = (await api('GET', `/api/interactions/${id}`)).body
    t.match(stored, { status: 'FAILED', errorMessage: 'interrupted: node lost' })
    t.same(
      stored.steps.filter((s: any) => s.type === 'completion' || s.type === 'error').map((s: any) => s.text),
      ['interrupted: node lost'],
      'one terminal step'
    )
    for (const v of viewers) {
      t.same(
        v.frames.filter((f) => f.type === 'interaction-terminal').map((f) => [f.status, f.errorMessage]),
        [['FAILED', 'interrupted: node lost']],
        `the viewer on ${v.node} got exactly one terminal frame`
      )
      t.equal(v.code, 1000, `then ${v.node} closed its socket as a finished stream`)
      t.same(
        stepsOf(v.frames),
        stored.steps.map((s: { seq: number }) => s.seq),
        `the viewer on ${v.node} saw every step once`
      )
    }
  })
}

const speak = (m: WsMember, data: unknown): void => {
  m.ws.send(JSON.stringify(data))
}

/** Speaks from `from` until `to` hears it: a backplane subscription takes effect some time after it is made. */
async function linked(from: WsMember, to: WsMember): Promise<void> {
  const heard = () => to.inbox.all.some((f) => f.type === 'message' && f.from === from.uuid && f.data?.probe === true)
  for (let i = 0; i < 500 && !heard(); i++) {
    speak(from, { probe: true })
    await new Promise((r) => setTimeout(r, 20))
  }
  if (!heard()) throw new Error('the two nodes never linked')
}

const stepsOf = (frames: any[]): number[] =>
  frames.filter((f) => f.type === 'interaction-step').map((f) => f.step.seq as number)

/** A live stream over WebSocket: its frames as they come, and whether (with which code) the server closed it. */
function watch(base: string, id: string): { frames: any[]; done: boolean; code: number | undefined } {
  const out = { frames: [] as any[], done: false, code: undefined as number | undefined }
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/platform/interactions-stream?id=${id}`, {
    headers: { authorization: `Bearer ${TOKEN}` }
  })
  ws.on('message', (d) => out.frames.push(JSON.parse(String(d))))
  ws.on('close', (code) => {
    out.code = code
    out.done = true
  })
  ws.on('error', () => (out.done = true))
  return out
}

/** A live stream over SSE, read as its events come: what passes through nginx unbuffered. */
function sse(url: string): { frames: any[]; steps: () => number[]; ended: boolean } {
  const out = { frames: [] as any[], steps: () => stepsOf(out.frames), ended: false }
  void (async () => {
    try {
      const res = await fetch(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${TOKEN}` } })
      const reader = res.body!.getReader()
      const dec = new TextDecoder()
      let buf = ''
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buf += dec.decode(value, { stream: true })
        let i
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const data = buf
            .slice(0, i)
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
          buf = buf.slice(i + 2)
          if (data.length > 0) out.frames.push(JSON.parse(data.join('\n')))
        }
      }
    } finally {
      out.ended = true
    }
  })()
  return out
}
