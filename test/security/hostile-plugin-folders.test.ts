// Hostile plugin folders: what an attacker who can drop files into a plugin
// directory, or an operator's slip, puts in front of the host. The host reads regular files only,
// bounded in size, follows no symlink out of the plugin directory, says so in a log line, and
// becomes ready with every healthy plugin live. Start-up files (the commitment key, the config
// file) get the same rule.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, openSync, closeSync, ftruncateSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startWithPlugins, tempRoot, writePlugin, toolPlugin, inlineGrants, statusOf } from '../plugins/helpers.js'
import { startTestPlatform } from '../helpers/platform.js'
import { readManifest } from '../../runtime/plugins/manifest.js'
import { installAreas, loadConfig } from '../../runtime/areas.js'
import { scopeArea } from '../../runtime/scope/install.js'
import { governanceArea } from '../../runtime/governance/install.js'
import type { Platform } from '../../runtime/platform.js'

const installGovernance = (p: Platform) => installAreas(p, [scopeArea, governanceArea])

const mkfifo = (path: string): void => {
  execFileSync('mkfifo', [path])
}
const leftOut = (logs: Record<string, unknown>[], path: string): boolean =>
  logs.some((l) => typeof l.msg === 'string' && l.msg.endsWith('left out') && l.path === path)

t.test('a FIFO in a plugin folder is skipped and logged; the host becomes ready', async (t) => {
  const root = tempRoot()
  const dir = writePlugin(root, 'fifo-plugin', { index: toolPlugin('fifo_tool', 1) })
  mkfifo(join(dir, 'pipe'))
  writePlugin(root, 'healthy', { index: toolPlugin('healthy_tool', 2) })
  const tp = await startWithPlugins(root, inlineGrants('fifo-plugin', 'healthy'))
  t.teardown(tp.close)
  t.equal(statusOf(tp, 'fifo-plugin')?.state, 'live', 'the plugin beside the FIFO loads')
  t.equal(statusOf(tp, 'healthy')?.state, 'live')
  t.ok(leftOut(tp.logs, join(dir, 'pipe')), 'the FIFO is named in a log line')
  t.equal((await fetch(`${tp.url}/readyz`)).status, 200)
})

t.test('a FIFO as plugin.json fails that plugin only, with the reason', async (t) => {
  const root = tempRoot()
  const dir = join(root, 'fifo-manifest')
  mkdirSync(dir)
  writeFileSync(join(dir, 'index.js'), toolPlugin('x', 1))
  mkfifo(join(dir, 'plugin.json'))
  t.throws(() => readManifest(dir), { message: /plugin\.json: not a regular file/ })
  writePlugin(root, 'healthy', { index: toolPlugin('healthy_tool', 2) })
  const tp = await startWithPlugins(root, inlineGrants('healthy'))
  t.teardown(tp.close)
  t.equal(statusOf(tp, 'healthy')?.state, 'live')
  t.equal(statusOf(tp, 'fifo-manifest')?.state, 'failed')
  t.match(statusOf(tp, 'fifo-manifest')?.error, /not a regular file/)
})

t.test('a symlink to /dev/zero in a plugin folder is not read', async (t) => {
  const root = tempRoot()
  const dir = writePlugin(root, 'zero', { index: toolPlugin('zero_tool', 1) })
  symlinkSync('/dev/zero', join(dir, 'zero.bin'))
  const rss = process.memoryUsage().rss
  const tp = await startWithPlugins(root, inlineGrants('zero'))
  t.teardown(tp.close)
  t.equal(statusOf(tp, 'zero')?.state, 'live')
  t.ok(leftOut(tp.logs, join(dir, 'zero.bin')), 'the link is named in a log line')
  // reading /dev/zero would grow without bound (9.4 GB before the fix): a generous bound, not a timing
  t.ok(process.memoryUsage().rss - rss < 512 * 1024 * 1024, 'memory stayed bounded')
})

t.test('a 1.5 GB file in a plugin folder is not read whole', async (t) => {
  const root = tempRoot()
  const dir = writePlugin(root, 'huge', { index: toolPlugin('huge_tool', 1) })
  // sparse: 1.5 GB long, no disk used
  const fd = openSync(join(dir, 'data.bin'), 'w')
  ftruncateSync(fd, 1536 * 1024 * 1024)
  closeSync(fd)
  const rss = process.memoryUsage().rss
  const tp = await startWithPlugins(root, inlineGrants('huge'))
  t.teardown(tp.close)
  t.equal(statusOf(tp, 'huge')?.state, 'live')
  t.ok(process.memoryUsage().rss - rss < 512 * 1024 * 1024, 'the file was not read into memory')
})

t.test('a plugin folder that is a symlink out of the plugin directory is not loaded', async (t) => {
  const outside = mkdtempSync(join(tmpdir(), 'outside-'))
  writePlugin(outside, 'evil', { index: toolPlugin('evil_tool', 1) })
  const root = tempRoot()
  symlinkSync(join(outside, 'evil'), join(root, 'evil'))
  writePlugin(root, 'healthy', { index: toolPlugin('healthy_tool', 2) })
  // a link that stays inside the plugin directory is still followed
  writePlugin(root, '.store/inside', {
    manifest: { name: 'inside', version: '1.0.0' },
    index: toolPlugin('inside_tool', 3)
  })
  symlinkSync(join(root, '.store', 'inside'), join(root, 'inside'))
  const tp = await startWithPlugins(root, inlineGrants('evil', 'healthy', 'inside'))
  t.teardown(tp.close)
  t.equal(statusOf(tp, 'evil'), undefined, 'not loaded, not listed')
  t.equal(statusOf(tp, 'healthy')?.state, 'live')
  t.equal(statusOf(tp, 'inside')?.state, 'live', 'a link inside the plugin directory loads')
  t.ok(leftOut(tp.logs, join(root, 'evil')), 'the link is named in a log line')
})

t.test(
  'start-up files: a FIFO or /dev/zero as the commitment key or the config file stops start-up at once',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'startup-files-'))
    const fifo = join(dir, 'key.pem')
    mkfifo(fifo)
    const ON = {
      'platform.ai.governance.commitment-records.enabled': true,
      'platform.auth.tokens': [{ token: 'alice-token-0123456789', principal: 'alice' }]
    }
    for (const path of [fifo, '/dev/zero']) {
      await t.rejects(
        startTestPlatform(
          { ...ON, 'platform.ai.governance.commitment-records.key-file': path },
          { install: installGovernance }
        ),
        { code: 'PLT_ERR_OPERATOR_MISTAKE', message: /key-file: cannot read .*: not a regular file/ },
        path
      )
    }
    const cfg = join(dir, 'platform.yaml')
    mkfifo(cfg)
    for (const file of [cfg, '/dev/zero'])
      t.throws(() => loadConfig({ file, env: {} }), { message: /cannot read config file .*: not a regular file/ }, file)
  }
)
