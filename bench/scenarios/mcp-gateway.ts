import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { row, type RunOptions, type Scenario, type ScenarioResult } from '../scenario.js'
import { startPeer, startPlatform, type ServerProcess } from '../lib/proc.js'
import { httpLoad, measureHttp, type MeasuredHttp } from '../lib/http-load.js'
import { measureClientLoad, type ClientLoadResult } from '../lib/mcp-client-load.js'

const CONNECTIONS = 16
const VERSION = '2025-06-18'
const ACCEPT = 'application/json, text/event-stream'
const SEQ = 987654321

type Request = { method: string; body: string; headers: Record<string, string>; sequence: string }

/**
 * The governed MCP gateway: one `add` tool of an MCP server written with the official SDK (v1,
 * its session configuration), called directly and through our platform, which has the server in
 * `platform.mcp.servers` with `expose: true` and serves it as `up.add` on /platform/mcp (the
 * platform's official SDK client forwards each call). Two loads per subject: the official client
 * itself as the caller (a process of its own, its CPU counted: the cost of one call made directly
 * by the official client, against the same call made through the gateway), and the same
 * session-dialect `tools/call` POST repeated by the load tool (servers' CPU only).
 */
const scenario: Scenario = {
  name: 'mcp-gateway',
  description: `MCP tools/call through the gateway (/platform/mcp → an SDK server) vs the same SDK server called directly, ${CONNECTIONS} calls in flight, CPU per call (the official client as the caller, and servers only)`,
  async run(opts: RunOptions): Promise<ScenarioResult> {
    const servers: ServerProcess[] = []
    const notes: string[] = []
    try {
      const upstream = await startPeer(opts.root, 'mcp-sdk-v1.js', ['session'])
      servers.push(upstream)
      const upstreamConfig = JSON.stringify({ up: { url: `${upstream.url}/mcp`, expose: true } })
      const gateway = await startPlatform(opts.root, opts.tmpDir, ['--set', `platform.mcp.servers=${upstreamConfig}`])
      servers.push(gateway)

      const durationSec = opts.quick ? Math.min(3, opts.durationSec) : opts.durationSec
      const subjects = [
        { name: 'direct', url: `${upstream.url}/mcp`, tool: 'add' },
        { name: 'gateway', url: `${gateway.url}/platform/mcp`, tool: 'up.add' }
      ]
      const res = new Map<string, { m: MeasuredHttp; upstreamUs: number }>()
      const byClient = new Map<string, ClientLoadResult>()
      for (const s of subjects) {
        if (opts.signal.aborted) throw new Error('aborted')
        const request = await prepare(s.url, s.tool)
        if (typeof request === 'string') {
          notes.push(`${s.name}: not measured (${request})`)
          opts.log(`  ${s.name}: ${request}`)
          continue
        }
        await httpLoad({
          url: s.url,
          connections: CONNECTIONS,
          durationSec: opts.warmupSec,
          root: opts.root,
          request,
          signal: opts.signal
        })
        const front = s.name === 'direct' ? upstream : gateway
        const up0 = upstream.cpuSeconds()
        const m = await measureHttp(front, {
          path: new URL(s.url).pathname,
          connections: CONNECTIONS,
          durationSec,
          root: opts.root,
          request,
          signal: opts.signal
        })
        // through the gateway the SDK server works too: its CPU is part of the call's cost
        const upstreamUs = m.requests > 0 ? ((upstream.cpuSeconds() - up0) * 1e6) / m.requests : NaN
        opts.log(
          `  ${s.name.padEnd(8)} ${Math.round(m.rps)} calls/s, p50 ${m.p50Ms.toFixed(2)} ms, ${m.cpuUsPerReq.toFixed(1)} CPU µs/call in ${front === upstream ? 'the SDK server' : `the platform + ${upstreamUs.toFixed(1)} in the SDK server`}${m.errors > 0 ? `, ${m.errors} errors` : ''}`
        )
        if (m.errors > 0) notes.push(`${s.name}: ${m.errors} failed or timed-out requests during the measured window`)
        if (m.requests === 0) {
          notes.push(`${s.name}: no call completed within the window (not measured)`)
          continue
        }
        res.set(s.name, { m, upstreamUs })
        const c = await measureClientLoad({
          root: opts.root,
          url: s.url,
          tool: s.tool,
          inFlight: CONNECTIONS,
          warmupSec: opts.warmupSec,
          durationSec,
          servers: front === upstream ? [upstream] : [gateway, upstream],
          signal: opts.signal
        })
        const total = c.clientUs + c.serverUs.reduce((a, b) => a + b, 0)
        opts.log(
          `  ${s.name.padEnd(8)} official client as the caller: ${Math.round(c.rps)} calls/s, ${total.toFixed(1)} CPU µs/call (client ${c.clientUs.toFixed(1)}${c.serverUs.length === 2 ? `, platform ${c.serverUs[0]!.toFixed(1)}` : ''}, SDK server ${c.serverUs.at(-1)!.toFixed(1)})${c.errors > 0 ? `, ${c.errors} errors` : ''}`
        )
        if (c.errors > 0)
          notes.push(`${s.name}: ${c.errors} failed calls of the official client during the measured window`)
        if (c.calls > 0) byClient.set(s.name, c)
      }
      const direct = res.get('direct')
      const via = res.get('gateway')
      const peer: Record<string, number> = direct === undefined ? {} : { 'sdk-direct': direct.m.cpuUsPerReq }
      const whole = (c: ClientLoadResult | undefined): number | undefined =>
        c === undefined ? undefined : c.clientUs + c.serverUs.reduce((a, b) => a + b, 0)
      const directWhole = whole(byClient.get('direct'))
      const rows = [
        row(
          'cpu_us_per_call',
          'CPU per call made by the official client: the client, the platform and the SDK server behind it, vs the client and the SDK server called directly (ratio = calls per CPU-second)',
          'µs',
          'lower',
          whole(byClient.get('gateway')),
          directWhole === undefined ? {} : { 'sdk-direct': directWhole },
          false
        ),
        row(
          'servers.cpu_us_per_call',
          'servers only, the load tool as the caller: the platform and the SDK server behind it, vs the SDK server called directly',
          'µs',
          'lower',
          via === undefined ? undefined : via.m.cpuUsPerReq + via.upstreamUs,
          peer,
          false
        ),
        row(
          'platform.cpu_us_per_call',
          "the platform's own CPU per forwarded call, vs the SDK server's CPU per direct call",
          'µs',
          'lower',
          via?.m.cpuUsPerReq,
          peer,
          false
        ),
        row(
          'rps',
          'calls/s',
          '/s',
          'higher',
          via?.m.rps,
          direct === undefined ? {} : { 'sdk-direct': direct.m.rps },
          false
        )
      ]
      notes.push(
        `loads: (1) the official SDK client in its own process, one session, ${CONNECTIONS} calls in flight; (2) the load tool, ${CONNECTIONS} connections, one session-dialect (${VERSION}) tools/call POST repeated after the official client opened the session; ${opts.warmupSec} s warm-up + ${durationSec} s per subject and load`
      )
      notes.push(
        'the gateway path is a second MCP hop (the platform is itself an official SDK client of the SDK server): the target compares the whole CPU of a call made by the official client, through the gateway and directly; the servers-only row leaves the caller out, so there the platform pays for an SDK client the direct call does not count'
      )
      return {
        scenario: 'mcp-gateway',
        description: this.description,
        rows,
        notes,
        details: Object.fromEntries(
          [...res].map(([k, v]) => [k, { ...v.m, upstreamCpuUsPerReq: v.upstreamUs, officialClient: byClient.get(k) }])
        )
      }
    } finally {
      await Promise.all(servers.map((s) => s.stop()))
    }
  }
}

/**
 * Opens a session with the official client and checks one call, then gives the request the load
 * repeats on that session (the load tool numbers the JSON-RPC ids).
 */
async function prepare(url: string, tool: string): Promise<Request | string> {
  const client = new Client({ name: 'bench', version: '1' })
  const transport = new StreamableHTTPClientTransport(new URL(url))
  try {
    await client.connect(transport)
    const r = await client.callTool({ name: tool, arguments: { a: 1, b: 2 } })
    if (r.isError === true) return `${tool} answered an error: ${JSON.stringify(r.content).slice(0, 160)}`
    const sid = transport.sessionId
    if (sid === undefined) return 'no Mcp-Session-Id'
    return {
      method: 'POST',
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: SEQ,
        method: 'tools/call',
        params: { name: tool, arguments: { a: 1, b: 2 } }
      }),
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT,
        'mcp-session-id': sid,
        'mcp-protocol-version': transport.protocolVersion ?? VERSION
      },
      sequence: String(SEQ)
    }
  } catch (err) {
    return `the official client failed: ${(err as Error).message}`
  }
}

export default scenario
