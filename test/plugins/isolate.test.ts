import t from 'tap'
import { join } from 'node:path'
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { startTestPlatform } from '../helpers/platform.js'
import { loadIsolate } from '../../runtime/plugins/isolate/index.js'
import type { LoadSpec } from '../../runtime/plugins/index.js'
import { runTierContract } from './tier-contract.js'

const tp = await startTestPlatform()
t.teardown(tp.close)

for (const isolation of ['process', 'in-process'] as const) {
  runTierContract(t, {
    tier: 'isolate',
    label: isolation,
    load: loadIsolate,
    platform: tp,
    spec: { isolation },
    stopsRunawayCode: true,
    timeoutMessage: /exceeded its time limit of 300 ms/,
    countsFailures: true,
    argsAsJson: true,
    wrapsThrows: true,
    sharesModuleState: true,
    missingEntry: /no such file/
  })
}

// what only an isolate refuses: Node built-ins, bare specifiers, paths out of the plugin folder,
// and a load that never ends
t.test('load errors name what the isolate refuses', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iso-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const spec = (folder: string): LoadSpec => {
    const limits = { memoryMb: 32, timeoutMs: 300, concurrency: 4 }
    return {
      dir: join(dir, folder),
      entry: join(dir, folder, 'index.js'),
      manifest: {
        name: 'healthy',
        version: '1.0.0',
        entry: 'index.js',
        sandbox: 'isolate',
        permissions: { net: [], kv: false, env: [] },
        limits
      },
      grant: { sandbox: 'isolate', permissions: { net: [], kv: false, env: [] }, limits },
      capabilities: { log: tp.platform.logger },
      metrics: tp.platform.metrics
    }
  }
  const cases: [string, string, RegExp][] = [
    ['node-import', 'import fs from "node:fs"; export default fs', /'node:fs' refused/],
    ['bare', 'import x from "lodash"; export default x', /'lodash' refused: bare specifiers/],
    ['escape', 'import x from "../../etc/passwd.js"; export default x', /refused/],
    ['absolute', 'import x from "/etc/passwd"; export default x', /'\/etc\/passwd' refused/],
    ['loop', 'for (;;) {}', /time limit|timed out/]
  ]
  for (const [name, code, re] of cases) {
    mkdirSync(join(dir, name))
    writeFileSync(join(dir, name, 'index.js'), code)
    await t.rejects(loadIsolate(spec(name)), re, name)
  }
})
