/**
 * Tool calls made by the official MCP SDK client, as a process of its own so that its CPU is
 * counted apart from the servers': `node mcp-client-worker.js <url> <tool> <in-flight> <warmup-s>`.
 * It opens one session, keeps `in-flight` calls of `tool` going through the warm-up, prints
 * `ready`, and on each line `go <seconds>` on stdin measures a window of that length and prints
 * one JSON line: `{calls, errors, seconds, cpuUs}` (its own CPU in the window). The harness reads
 * the servers' CPU at `go` and at the answer, so all figures cover the same window.
 */
import { createInterface } from 'node:readline'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

const [url, tool, inFlight, warmup] = process.argv.slice(2)
const client = new Client({ name: 'bench-load', version: '1' })
await client.connect(new StreamableHTTPClientTransport(new URL(url!)))

let calls = 0
let errors = 0
let stop = false
async function caller(): Promise<void> {
  while (!stop) {
    try {
      const r = await client.callTool({ name: tool!, arguments: { a: 1, b: 2 } })
      if (r.isError === true) errors++
      else calls++
    } catch {
      errors++
    }
  }
}

async function window(seconds: number): Promise<{ calls: number; errors: number; seconds: number; cpuUs: number }> {
  calls = 0
  errors = 0
  stop = false
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const callers = Array.from({ length: Number(inFlight) }, caller)
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  stop = true
  await Promise.all(callers)
  const cpu = process.cpuUsage(cpu0)
  return { calls, errors, seconds: (performance.now() - t0) / 1000, cpuUs: cpu.user + cpu.system }
}

await window(Number(warmup))
console.log('ready')
for await (const line of createInterface({ input: process.stdin })) {
  const m = /^go (\d+(?:\.\d+)?)$/.exec(line.trim())
  if (m === null) break
  console.log(JSON.stringify(await window(Number(m[1]))))
}
await client.close()
process.exit(0)
