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
  /** `loaded`: the file as it is on disk serves; `failed`: the last edit did not load, the previous policies still serve. */
  status: 'loaded' | 'failed'
  policies: string[]
  loadedAt: string
  error?: string
  failedAt?: string
}

interface Loader { loadFile (path: string): { name: string }[] }

export class PolicyFiles {
  private readonly state = new Map<string, PolicyFileStatus & { digest: string }>()
  private readonly watched: string[] = []

  constructor (private readonly loader: Loader, private readonly logger: Logger) {}

  /** Loads every file; the first that fails throws (PolicyLoadError) and nothing is watched. */
  loadAll (files: readonly string[]): void {
    for (const file of files) {
      const digest = digestOf(file)
      const policies = this.loader.loadFile(file).map((p) => p.name)
      this.state.set(file, { file, status: 'loaded', policies, loadedAt: new Date().toISOString(), digest })
      this.logger.info({ file, policies }, `loaded ${policies.length} governance policies from ${file}`)
    }
  }

  /** Polls each file's stat every `intervalMs` (0: not watched); polling also sees editors that replace the file. */
  watch (intervalMs: number): void {
    if (intervalMs <= 0) return
    for (const file of this.state.keys()) {
      watchFile(resolve(file), { interval: intervalMs, persistent: false }, () => { this.reload(file) })
      this.watched.push(file)
    }
  }

  /** Reloads one file now (the watcher calls this on a change). */
  reload (file: string): void {
    const prev = this.state.get(file)
    if (prev === undefined) return
    const digest = digestOf(file)
    if (digest === prev.digest && prev.status === 'loaded') return
    try {
      const policies = this.loader.loadFile(file).map((p) => p.name)
      this.state.set(file, { file, status: 'loaded', policies, loadedAt: new Date().toISOString(), digest })
      this.logger.info({ file, policies }, `policy file ${file} changed: ${policies.length} policies now serve`)
    } catch (err) {
      const error = (err as Error).message
      this.state.set(file, { ...prev, status: 'failed', error, failedAt: new Date().toISOString(), digest })
      this.logger.error({ file, error }, `policy file ${file} changed but does not load; the previous policies keep serving`)
    }
  }

  status (): PolicyFileStatus[] {
    return [...this.state.values()].map(({ digest: _d, ...s }) => s)
  }

  close (): void {
    for (const file of this.watched.splice(0)) unwatchFile(resolve(file))
  }
}

/** Content digest, or the read error's code: a deleted file counts as a change. */
function digestOf (file: string): string {
  try { return createHash('sha256').update(readFileSync(resolve(file))).digest('hex') } catch (err) { return `unreadable:${(err as NodeJS.ErrnoException).code ?? 'error'}` }
}
