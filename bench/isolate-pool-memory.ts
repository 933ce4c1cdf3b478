/**
 * Memory of 50 isolate-tier plugins: the real server (bin/platform.js) with 50 small
 * generated plugins, once with the default pooled layout and once with a sandbox process per
 * plugin (`platform.sandbox.isolate.plugins-per-process: 1`). Each plugin's tool is called once
 * over MCP, then the RSS of the server and all its sandbox processes is summed from /proc.
 *
 *   npx tsc -p tsconfig.json && node --no-node-snapshot dist/bench/isolate-pool-memory.js [--plugins N]
 *
 * Prints a table, then one JSON line (`{"bench":"isolate-pool-memory",...}`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { memoryOf, processTree, startServer } from './lib/proc.js'

const { values } = parseArgs({ options: { plugins: { type: 'string', default: '50' } } })
const N = Number(values.plugins)
const root = fileURLToPath(new URL('../../', import.meta.url))
const MODERN = '2026-07-28'

function writePlugins(dir: string): void {
  for (let i = 0; i < N; i++) {
    const name = `mem-${String(i).padStart(2, '0')}`
    const d = join(dir, name)
    mkdirSync(d, { recursive: true })
    writeFileSync(
      join(d, 'index.js'),
      `import { definePlugin, tool } from 'uws-agent-platform/sdk'
export default definePlugin({ tools: [tool({ name: 'echo_${i}', description: 'echoes', run: ({ text }) => ({ text, by: ${JSON.stringify(name)} }) })] })
`
    )
    writeFileSync(
      join(d, 'plugin.json'),
      JSON.stringify({
        name,
        version: '1.0.0',
        entry: 'index.js',
        sandbox: 'isolate',
        limits: { memoryMb: 32, timeoutMs: 5000, concurrency: 4 }
      })
    )
  }
}

async function callTool(url: string, name: string): Promise<void> {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': 'tools/call',
    'mcp-name': name
  }
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name,
      arguments: { text: 'hi' },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }
      }
    }
  })
  const r = await fetch(`${url}/platform/mcp`, { method: 'POST', headers, body })
  const text = await r.text()
  if (!r.ok || !text.includes('"by"')) throw new Error(`tools/call ${name} answered ${r.status}: ${text.slice(0, 200)}`)
}

interface Layout {
  layout: string
  processes: number
  totalMb: number
  hostMb: number
  sandboxesMb: number
  mbPerPlugin: number
}

async function measure(layout: string, sets: string[], tmp: string): Promise<Layout> {
  const data = mkdtempSync(join(tmp, 'data-'))
  const server = await startServer({
    name: layout,
    cwd: root,
    args: [
      '--no-node-snapshot',
      join(root, 'bin/platform.js'),
      'serve',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--data',
      data,
      '--plugins',
      join(tmp, 'plugins'),
      '--log-level',
      'warn',
      ...sets.flatMap((s) => ['--set', s])
    ],
    timeoutMs: 120_000
  })
  try {
    for (let i = 0; i < 600; i++) {
      if ((await fetch(`${server.url}/readyz`)).status === 200) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    for (let i = 0; i < N; i++) await callTool(server.url, `echo_${i}`)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const pids = processTree(server.pid)
    let sandboxes = 0
    for (const pid of pids.slice(1)) {
      try {
        sandboxes += memoryOf(pid).rss
      } catch {
        /* exited */
      }
    }
    const host = memoryOf(server.pid).rss
    const mb = (b: number): number => b / 1048576
    return {
      layout,
      processes: pids.length - 1,
      totalMb: mb(host + sandboxes),
      hostMb: mb(host),
      sandboxesMb: mb(sandboxes),
      mbPerPlugin: mb(host + sandboxes) / N
    }
  } finally {
    await server.stop()
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'isolate-pool-bench-'))
try {
  writePlugins(join(tmp, 'plugins'))
  const rows = [
    await measure('pooled (default: 8 per process, at most 4)', [], tmp),
    await measure(
      'a process per plugin (plugins-per-process 1)',
      ['platform.sandbox.isolate.plugins-per-process=1'],
      tmp
    )
  ]
  const f = (n: number): string => n.toFixed(1)
  console.log(`\n${N} isolate plugins, each tool called once, RSS of the server + its sandbox processes\n`)
  console.log('| layout | sandbox processes | total MB | host MB | sandboxes MB | MB per plugin |')
  console.log('|---|---:|---:|---:|---:|---:|')
  for (const r of rows)
    console.log(
      `| ${r.layout} | ${r.processes} | ${f(r.totalMb)} | ${f(r.hostMb)} | ${f(r.sandboxesMb)} | ${f(r.mbPerPlugin)} |`
    )
  console.log(
    JSON.stringify({
      bench: 'isolate-pool-memory',
      node: process.version,
      plugins: N,
      rows,
      target: { totalMbMax: 600 }
    })
  )
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
