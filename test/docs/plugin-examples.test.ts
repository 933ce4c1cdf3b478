// The plugin examples of README.md and docs/*.md (JavaScript blocks that default-export
// definePlugin) load as real plugins, each in a folder of its own, in the default isolate tier.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pages, readBlocks, where, type Block } from '../helpers/doc-pages.js'
import { startTestPlatform } from '../helpers/platform.js'
import { installAreas } from '../../runtime/areas.js'

const isPlugin = (b: Block) => (b.lang === 'js' || b.lang === 'mjs') && /export default definePlugin\(/.test(b.text)
// a page that cannot be read is reported by examples.test.ts; here it only has no plugin examples
const blocks = pages()
  .flatMap((p) => {
    try {
      return readBlocks(p)
    } catch {
      return []
    }
  })
  .filter(isPlugin)
const root = mkdtempSync(join(tmpdir(), 'docs-plugins-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))

const loaded = new Map<string, Block>()
for (const b of blocks) {
  if (b.directive.skip !== undefined) {
    t.comment(`not loaded: ${where(b)}: ${b.directive.skip}`)
    continue
  }
  const name = `docs-${b.file
    .replace(/^docs\//, '')
    .replace(/\.md$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')}-${b.line}`
  mkdirSync(join(root, name))
  writeFileSync(join(root, name, 'index.js'), b.text)
  writeFileSync(join(root, name, 'plugin.json'), JSON.stringify({ name, version: '1.0.0', entry: 'index.js' }))
  loaded.set(name, b)
}

t.test('the plugin examples load', async (t) => {
  t.ok(loaded.size >= 3, `plugin examples found: ${loaded.size}`)
  const tp = await startTestPlatform({ 'platform.plugins.dirs': [root] }, { install: installAreas })
  t.teardown(tp.close)

  for (const [name, b] of loaded) {
    const s = tp.platform.plugins.status().find((x) => x.name === name)
    const what = Object.entries(s?.contributes ?? {}).flatMap(([k, v]) =>
      v.length > 0 ? [`${k}: ${v.join(', ')}`] : []
    )
    t.ok(
      s?.state === 'live' && what.length > 0,
      `${where(b)}: the plugin example loads and contributes something; got ${s === undefined ? 'no plugin' : `${s.state}${s.error !== undefined ? ` (${s.error})` : ''}, ${what.join('; ') || 'nothing'}`}`
    )
  }
})
