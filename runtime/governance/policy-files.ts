/**
 * The configured policy files, loaded at start-up and watched afterwards. An edit that parses
 * replaces that file's policies in one step (the chain swaps its snapshot atomically); an edit
 * that does not parse keeps the policies already serving, is logged, and shows in health until
 * the file loads again. At start-up a file that does not load stops the platform.
 */
import { createHash } from 'node:crypto'
import { readFileSync, unwatchFile, watchFile } from 'node:fs'
import { resolve } from 'node:path'
import type { Logger } from 'pino'

export interface PolicyFileStatus {
  file: string
  /**
   * `loaded`: the file as it is on disk serves;
   * `failed`: the last edit did not load, the previous policies still serve.
   */
  status: 'loaded' | 'failed'
  policies: string[]
  loadedAt: string
  error?: string
  failedAt?: string
}

interface Loader {
  loadFile(path: string, content?: string): { name: string }[]
}

export class PolicyFiles {
  private readonly state = new Map<string, PolicyFileStatus & { digest: string }>()
  private readonly watched: string[] = []
  private readonly timers = new Set<NodeJS.Timeout>()
  private settleMs = 0
  private readonly listeners: ((file: string, digest: string) => void)[] = []

  constructor(
    private readonly loader: Loader,
    private readonly logger: Logger
  ) {}

  /** Called when an edit seen on this node loaded (the cluster tells the other nodes to read theirs). */
  onChange(fn: (file: string, digest: string) => void): void {
    this.listeners.push(fn)
  }

  /** The sha-256 of what `file` held when it was last read, if it is configured. */
  digest(file: string): string | undefined {
    return this.state.get(file)?.digest
  }

  /** Loads every file; the first that fails throws (POLICY_LOAD_FAILED) and nothing is watched. */
  loadAll(files: readonly string[]): void {
    for (const file of files) {
      const read = readText(file)
      const digest = digestOf(read)
      // unreadable: loadFile reads it itself and throws the error that names the file
      const policies = this.loader.loadFile(file, read.text).map((p) => p.name)
      this.state.set(file, { file, status: 'loaded', policies, loadedAt: new Date().toISOString(), digest })
      this.logger.info({ file, policies }, `loaded ${policies.length} governance policies from ${file}`)
    }
  }

  /** Polls each file's stat every `intervalMs` (0: not watched); polling also sees editors that replace the file. */
  watch(intervalMs: number): void {
    if (intervalMs <= 0) return
    this.settleMs = Math.min(intervalMs, 200)
    for (const file of this.state.keys()) {
      watchFile(resolve(file), { interval: intervalMs, persistent: false }, () => {
        this.changed(file)
      })
      this.watched.push(file)
    }
  }

  /**
   * A file written in place can be seen half written, and half a rules list may well parse: the
   * content is read twice, `settleMs` apart, and loaded only when both reads agree (a write still
   * going on changes the file again, and the next poll comes back here).
   */
  private changed(file: string): void {
    const first = readText(file)
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      const second = readText(file)
      if (first.text === second.text && first.error === second.error) this.reload(file, second)
    }, this.settleMs)
    this.timers.add(timer)
  }

  /**
   * Loads one file again as read (the watcher calls this once the file is stable). `told`: another
   * node saw its copy change, so this one is read now, and the change is not announced again.
   */
  reload(file: string, read: { text?: string; error?: string } = readText(file), told = false): void {
    const prev = this.state.get(file)
    if (prev === undefined) return
    const digest = digestOf(read)
    if (digest === prev.digest && prev.status === 'loaded') return
    try {
      const policies = this.loader.loadFile(file, read.text).map((p) => p.name)
      this.state.set(file, { file, status: 'loaded', policies, loadedAt: new Date().toISOString(), digest })
      this.logger.info({ file, policies }, `policy file ${file} changed: ${policies.length} policies now serve`)
      if (!told) for (const fn of this.listeners) fn(file, digest)
    } catch (err) {
      const error = (err as Error).message
      this.state.set(file, { ...prev, status: 'failed', error, failedAt: new Date().toISOString(), digest })
      this.logger.error(
        { file, error },
        `policy file ${file} changed but does not load; the previous policies keep serving`
      )
    }
  }

  status(): PolicyFileStatus[] {
    return [...this.state.values()].map(({ digest: _d, ...s }) => s)
  }

  close(): void {
    for (const file of this.watched.splice(0)) unwatchFile(resolve(file))
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
  }
}

/** The file's text, or the read error's code: a deleted file counts as a change (that fails). */
function readText(file: string): { text?: string; error?: string } {
  try {
    return { text: readFileSync(resolve(file), 'utf8') }
  } catch (err) {
    return { error: (err as NodeJS.ErrnoException).code ?? 'error' }
  }
}

function digestOf(r: { text?: string; error?: string }): string {
  return r.text !== undefined ? createHash('sha256').update(r.text).digest('hex') : `unreadable:${r.error ?? ''}`
}
