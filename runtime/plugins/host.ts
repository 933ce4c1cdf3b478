import { readdirSync, realpathSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Counter, Gauge } from 'prom-client'
import { CONFIG_ERRORS, didYouMean, type Config } from '../config/index.js'
import { PlatformError } from '../contracts/index.js'
import type { Logger, Metrics } from '../observability/index.js'
import type { PluginRegistry } from './registry.js'
import type { CapabilityDeps } from './capabilities.js'
import { TIERS, type TierMap } from './tiers.js'
import { FolderHasher, statInside } from './folder-hash.js'
import { ChangeWatcher } from './watcher.js'
import { loadPluginDir, type LoadOutcome } from './loader.js'

export interface PluginHostOptions {
  config: Config
  logger: Logger
  registry: PluginRegistry
  capabilities: CapabilityDeps
  /** Plugin directories (default `platform.plugins.dirs`, resolved against the working directory). */
  dirs?: string[]
  tiers?: TierMap
  /** Watch for changes after the first load (default true). */
  watch?: boolean
  debounceMs?: number
  rescanMs?: number
  /** How long a plugin may take to load before it is listed as failed (default 15 s). */
  loadTimeoutMs?: number
  /** The platform's metrics: load counters here, sandbox deaths in the tiers (`/metrics`). */
  metrics?: Metrics
}

interface Folder {
  hash: string
  name: string
}

const CLOSE_WAIT_MS = 2000

/**
 * Discovers plugin folders in every plugin directory, loads each through its sandbox tier and
 * keeps the registry in step with the disk: an added folder goes live, a changed one (by content
 * hash) is swapped in, a removed one disappears. One folder's failure affects nothing else.
 */
export class PluginHost {
  readonly dirs: string[]
  private readonly folders = new Map<string, Folder>()
  /** Plugin name -> the folder that provides it. */
  private readonly owners = new Map<string, string>()
  private readonly hasher = new FolderHasher()
  private readonly watcher: ChangeWatcher | undefined
  private readonly tiers: TierMap
  private readonly missingDirs = new Set<string>()
  /** Entries already logged as left out (a FIFO, a device, a symlink leaving the plugin directory). */
  private readonly warned = new Set<string>()
  /**
   * Folders refused because a name they contribute is served by another plugin:
   * retried when plugins go away or change.
   */
  private readonly clashed = new Set<string>()
  // the state that changes after start is in #private fields: platform.provide freezes the host
  /** A plugin went away or changed in this scan, so a refused folder may now fit. */
  #freed = false
  /** The configuration grants are read from; `reloadGrants` replaces it. */
  #config: Config
  #scanning: Promise<void> | undefined
  #again = false
  #closed = false
  #ready_ = false
  private readonly loads: Counter<'outcome'> | undefined
  private readonly gauge: Gauge<'state'> | undefined

  constructor(private readonly opts: PluginHostOptions) {
    this.#config = opts.config
    this.dirs = (opts.dirs ?? opts.config.get('platform.plugins.dirs')).map((d) => resolve(d))
    this.tiers = opts.tiers ?? TIERS
    if (opts.watch !== false)
      this.watcher = new ChangeWatcher(
        () => {
          void this.rescan()
        },
        { debounceMs: opts.debounceMs ?? 100, rescanMs: opts.rescanMs ?? 1000 }
      )
    if (opts.metrics !== undefined) {
      const registers = [opts.metrics.registry]
      this.loads = new Counter({
        name: 'platform_plugin_loads_total',
        help: 'Plugin loads by outcome (live, failed, disabled)',
        labelNames: ['outcome'],
        registers
      })
      this.gauge = new Gauge({ name: 'platform_plugins', help: 'Plugins by state', labelNames: ['state'], registers })
    }
  }

  /** True once the first scan has loaded every folder (readiness check `plugins`). */
  get ready(): boolean {
    return this.#ready_
  }

  /** Loads everything, then starts watching. */
  async start(): Promise<void> {
    this.checkDirs()
    await this.rescan()
    for (const w of this.unknownGrants()) this.opts.logger.warn({ plugin: w.plugin }, w.message)
    // one line for the first load; each plugin's own record is at debug (a failure warns by itself)
    const states = this.opts.registry.status().map((s) => s.state)
    const count = (state: string) => states.filter((s) => s === state).length
    const [live, failed, disabled] = [count('live'), count('failed'), count('disabled')]
    this.opts.logger.info(
      { live, failed, disabled },
      `${live} plugin${live === 1 ? '' : 's'} live, ${failed} failed${disabled > 0 ? `, ${disabled} disabled` : ''}`
    )
    this.#ready_ = true
    this.watcher?.start()
  }

  /** Brings the registry in step with the disk; concurrent requests coalesce into one more pass. */
  async rescan(): Promise<void> {
    if (this.#closed) return
    if (this.#scanning !== undefined) {
      this.#again = true
      return await this.#scanning
    }
    this.#scanning = (async () => {
      try {
        do {
          this.#again = false
          await this.scanOnce()
        } while (this.#again && !this.#closed)
      } catch (err) {
        this.opts.logger.error({ err }, 'plugin scan failed')
      } finally {
        this.#scanning = undefined
      }
    })()
    return await this.#scanning
  }

  /**
   * Takes the grants (`platform.plugins.<name>`) of a newly read configuration (SIGHUP): every
   * plugin whose grant changed is loaded again under the new one; the rest is untouched.
   * Resolves with the names of the plugins whose grant changed.
   */
  async reloadGrants(next: Config): Promise<string[]> {
    const grantKeys = (c: Config) =>
      Object.keys(c.values).filter((k) => k.startsWith('platform.plugins.') && k !== 'platform.plugins.dirs')
    const changed = [...new Set([...grantKeys(this.#config), ...grantKeys(next)])]
      .filter((k) => JSON.stringify(this.#config.values[k]) !== JSON.stringify(next.values[k]))
      .map((k) => k.slice('platform.plugins.'.length))
    this.#config = next
    if (changed.length === 0) return []
    for (const f of this.folders.values()) if (changed.includes(f.name)) f.hash = ''
    this.opts.logger.info({ plugins: changed }, `plugin grants changed for ${changed.join(', ')}: loading them again`)
    await this.rescan()
    for (const w of this.unknownGrants())
      if (changed.includes(w.plugin)) this.opts.logger.warn({ plugin: w.plugin }, w.message)
    return changed
  }

  /** Grants (`platform.plugins.<name>`) that name no plugin found in the plugin directories: usually a typo. */
  unknownGrants(): { plugin: string; message: string }[] {
    const names = new Set(this.opts.registry.status().map((s) => s.name))
    const out: { plugin: string; message: string }[] = []
    for (const k of Object.keys(this.#config.values)) {
      if (!k.startsWith('platform.plugins.') || k === 'platform.plugins.dirs') continue
      const plugin = k.slice('platform.plugins.'.length)
      if (!names.has(plugin))
        out.push({
          plugin,
          message: `${k} grants plugin '${plugin}', which is in no plugin directory (${this.dirs.join(', ')})${didYouMean(plugin, names)}`
        })
    }
    return out
  }

  async close(): Promise<void> {
    this.#closed = true
    this.watcher?.close()
    // a load still running disposes its sandbox itself when it ends (apply sees `closed`); wait
    // for it only briefly so a hung plugin cannot hold up shutdown
    if (this.#scanning !== undefined) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        this.#scanning,
        new Promise((resolve) => {
          timer = setTimeout(resolve, CLOSE_WAIT_MS)
        })
      ])
      clearTimeout(timer)
    }
    await this.opts.registry.closeAll()
  }

  /**
   * A plugin directory that exists but cannot be listed (not a directory, no permission) is an
   * operator mistake that would otherwise leave the platform running without its plugins. A
   * missing one is not: it is watched and loads when it appears.
   */
  private checkDirs(): void {
    for (const dir of this.dirs) {
      try {
        readdirSync(dir)
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code
        if (code === 'ENOENT') continue
        const why =
          code === 'ENOTDIR'
            ? 'it is not a directory'
            : code === 'EACCES' || code === 'EPERM'
              ? 'permission denied'
              : (err as Error).message
        throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, {
          detail: `plugin directory ${dir} cannot be read: ${why} (platform.plugins.dirs)`
        })
      }
    }
  }

  /** Logs a left-out entry once while it stays as it is (the rescan would repeat it every time). */
  private warnOnce(path: string, why: string, msg: string): void {
    const key = `${path}\0${why}`
    if (this.warned.has(key)) return
    this.warned.add(key)
    this.opts.logger.warn({ path, why }, msg)
  }

  private listFolders(root: string): string[] {
    let entries
    try {
      entries = readdirSync(root, { withFileTypes: true })
      this.missingDirs.delete(root)
    } catch (err) {
      if (!this.missingDirs.has(root)) {
        this.missingDirs.add(root)
        this.opts.logger.warn(
          { dir: root, err: (err as Error).message },
          'plugin directory cannot be read; watching for it'
        )
      }
      return []
    }
    const out: string[] = []
    let realRoot: string
    try {
      realRoot = realpathSync(root)
    } catch {
      return []
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue
      const p = join(root, e.name)
      const st = statInside(p, realRoot)
      if (typeof st !== 'string') {
        if (st.isDirectory()) out.push(p)
        continue
      }
      this.warnOnce(p, st, 'plugin folder left out')
    }
    return out.sort()
  }

  private async scanOnce(): Promise<void> {
    const seen = new Set<string>()
    const loads: { dir: string; hash: string; prev: Folder | undefined; outcome: Promise<LoadOutcome> }[] = []
    for (const root of this.dirs) {
      for (const dir of this.listFolders(root)) {
        if (this.#closed) break
        if (seen.has(dir)) continue
        seen.add(dir)
        const { digest: hash, skipped } = this.hasher.hash(dir, root)
        for (const s of skipped) this.warnOnce(join(dir, s.path), s.why, 'plugin file left out')
        const prev = this.folders.get(dir)
        if (prev !== undefined && prev.hash === hash) continue
        // folders load side by side (a slow one costs its own load timeout, not the sum); the
        // outcomes apply in folder order so that which of two same-named folders wins is stable
        loads.push({ dir, hash, prev, outcome: this.loadDir(dir) })
      }
    }
    for (const l of loads) await this.apply(l.dir, l.hash, l.prev, await l.outcome)
    if (this.#closed) return
    for (const [dir, f] of this.folders) {
      if (seen.has(dir)) continue
      this.folders.delete(dir)
      this.hasher.forget(dir)
      this.clashed.delete(dir)
      this.release(f.name, dir)
      this.#freed = true
      this.opts.logger.info({ plugin: f.name, dir }, 'plugin removed')
    }
    if (this.#freed && this.clashed.size > 0) {
      // load the refused folders again on the next pass (a changed hash makes the scan load them)
      for (const dir of this.clashed) {
        const f = this.folders.get(dir)
        if (f !== undefined) f.hash = ''
      }
      this.clashed.clear()
      this.#again = true
    }
    this.#freed = false
    this.watcher?.sync([...this.dirs, ...this.folders.keys()])
    this.updateGauge()
  }

  /** Unregisters `name` if `dir` is the folder that provides it. */
  private release(name: string, dir: string): void {
    if (this.owners.get(name) !== dir) return
    this.owners.delete(name)
    this.opts.registry.remove(name)
  }

  private async loadDir(dir: string): Promise<LoadOutcome> {
    return await loadPluginDir(dir, {
      config: this.#config,
      capabilities: this.opts.capabilities,
      tiers: this.tiers,
      ...(this.opts.loadTimeoutMs !== undefined ? { loadTimeoutMs: this.opts.loadTimeoutMs } : {}),
      ...(this.opts.metrics !== undefined ? { metrics: this.opts.metrics } : {})
    })
  }

  private async apply(dir: string, hash: string, prev: Folder | undefined, out: LoadOutcome): Promise<void> {
    if (this.#closed) {
      if (out.state === 'live') await out.instance.dispose().catch(() => {})
      return
    }
    let name = out.name
    // a folder whose manifest no longer parses keeps the name it had, so its listing shows the error
    if (out.state === 'failed' && out.manifest === undefined && prev !== undefined) name = prev.name
    if (prev !== undefined && prev.name !== name) this.release(prev.name, dir)
    const owner = this.owners.get(name)
    if (owner !== undefined && owner !== dir && this.folders.has(owner)) {
      if (out.state === 'live') await out.instance.dispose().catch(() => {})
      const key = dir
      this.opts.registry.setFailed(
        key,
        dir,
        `another folder (${owner}) already provides plugin '${name}'`,
        out.manifest
      )
      this.owners.set(key, dir)
      this.folders.set(dir, { hash, name: key })
      this.loads?.inc({ outcome: 'failed' })
      this.opts.logger.warn({ plugin: name, dir, owner }, 'plugin name already taken')
      return
    }
    this.owners.set(name, dir)
    this.folders.set(dir, { hash, name })
    this.clashed.delete(dir)
    const r = this.opts.registry
    if (out.state === 'live') {
      const clashes = r.clashes(name, out.instance.descriptor)
      if (clashes.length > 0) {
        // the plugin already serving keeps its names; this one is refused until that changes
        await out.instance.dispose().catch(() => {})
        out = {
          state: 'failed',
          name,
          manifest: out.manifest,
          error: `plugin '${name}' is refused: it contributes ${clashes.join(', ')}; rename it in one plugin or disable one (platform.plugins.<name>.enabled: false)`
        }
        this.clashed.add(dir)
      }
    }
    if (prev !== undefined && !this.clashed.has(dir)) this.#freed = true
    this.loads?.inc({ outcome: out.state })
    switch (out.state) {
      case 'live':
        r.set(dir, out.manifest, out.instance)
        // the first scan is summed up in one line by start(); a folder dropped in later or a reload is news
        this.opts.logger[this.#ready_ ? 'info' : 'debug'](
          { plugin: name, version: out.manifest.version, sandbox: out.grant.sandbox, dir, reload: prev !== undefined },
          prev !== undefined ? 'plugin reloaded' : 'plugin loaded'
        )
        break
      case 'disabled':
        r.setDisabled(name, dir, out.manifest)
        this.opts.logger.info({ plugin: name, dir }, 'plugin disabled by the operator')
        break
      case 'failed':
        r.setFailed(name, dir, out.error, out.manifest)
        this.opts.logger.warn({ plugin: name, dir, error: out.error }, 'plugin failed to load')
        break
    }
  }

  private updateGauge(): void {
    if (this.gauge === undefined) return
    const counts: Record<string, number> = { live: 0, failed: 0, disabled: 0 }
    for (const s of this.opts.registry.status()) counts[s.state] = (counts[s.state] ?? 0) + 1
    for (const [state, n] of Object.entries(counts)) this.gauge.set({ state }, n)
  }
}
