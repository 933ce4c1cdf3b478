// Starts the platform with the conformance fixture plugin (test/fixtures/plugins/conformance) and
// the two list-mutating diagnostics the suite needs, and prints the MCP URL. Used by run.mjs;
// `node --no-node-snapshot test/conformance/serve.mjs [port]` serves it for manual runs.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve, dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const { startPlatform } = await import(pathToFileURL(join(root, 'dist/runtime/platform.js')).href)
const { installAreas, loadConfig } = await import(pathToFileURL(join(root, 'dist/runtime/areas.js')).href)
const { getMcp } = await import(pathToFileURL(join(root, 'dist/runtime/mcp/index.js')).href)
const { inlineInstance } = await import(pathToFileURL(join(root, 'dist/runtime/plugins/inline.js')).href)

export async function serve(port = 0) {
  const fixtures = join(root, 'test/fixtures/plugins')
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-conformance-'))
  const config = loadConfig({
    env: {},
    cwd: root,
    overrides: {
      'platform.server.port': port,
      'platform.server.host': '127.0.0.1',
      'platform.data-dir': dataDir,
      'platform.plugins.dirs': [fixtures],
      'platform.plugins.conformance': { sandbox: 'inline' },
      'platform.log-level': 'warn'
    }
  })
  const { platform, url } = await startPlatform({ config, install: installAreas })
  // until plugin discovery is on main, register the fixture in-process (inline tier)
  if (!platform.plugins.has('conformance')) {
    const dir = join(fixtures, 'conformance')
    const manifest = JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8'))
    const def = (await import(pathToFileURL(join(dir, manifest.entry)).href)).default
    platform.plugins.set(
      dir,
      {
        permissions: { net: [], kv: false, env: [] },
        limits: { memoryMb: 128, timeoutMs: 30000, concurrency: 16 },
        ...manifest
      },
      inlineInstance(def, { log: platform.logger })
    )
  }
  // list-changed diagnostics: they mutate the registry, which only the host can do
  const mcp = getMcp(platform)
  let dynTool, dynPrompt
  mcp.registerTool({
    name: 'test_trigger_tool_change',
    description: 'Adds or removes a dynamic tool (tools list_changed)',
    handler: () => {
      if (dynTool) {
        dynTool()
        dynTool = undefined
      } else
        dynTool = mcp.registerTool({
          name: 'test_dynamic_tool',
          description: 'Appears and disappears',
          handler: () => 'dynamic'
        })
      return 'tool list changed'
    }
  })
  mcp.registerTool({
    name: 'test_trigger_prompt_change',
    description: 'Adds or removes a dynamic prompt (prompts list_changed)',
    handler: () => {
      if (dynPrompt) {
        dynPrompt()
        dynPrompt = undefined
      } else
        dynPrompt = mcp.registerPrompt({
          name: 'test_dynamic_prompt',
          description: 'Appears and disappears',
          handler: () => [{ role: 'user', content: { type: 'text', text: 'dynamic' } }]
        })
      return 'prompt list changed'
    }
  })
  return { platform, url: `${url}/platform/mcp`, close: () => platform.close() }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const s = await serve(Number(process.argv[2] ?? 0))
  console.log(s.url)
  for (const sig of ['SIGINT', 'SIGTERM'])
    process.on(sig, () => {
      void s.close().then(() => process.exit(0))
    })
}
