import { watch, type FSWatcher } from 'node:fs'

/**
 * Calls `onChange` (debounced) when anything under the watched paths may have changed:
 * fs.watch on each plugin directory and each plugin folder, plus a periodic call, because
 * fs.watch misses events (nested folders, network file systems, editors' rename dances).
 */
export class ChangeWatcher {
  private readonly watchers = new Map<string, FSWatcher>()
  private debounce: NodeJS.Timeout | undefined
  private interval: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    private readonly onChange: () => void,
    private readonly opts: { debounceMs: number; rescanMs: number }
  ) {}

  start(): void {
    this.interval = setInterval(() => {
      this.onChange()
    }, this.opts.rescanMs)
    this.interval.unref()
  }

  /** Watches exactly these paths (adds new ones, drops ones no longer listed). */
  sync(paths: Iterable<string>): void {
    if (this.closed) return
    const want = new Set(paths)
    for (const [p, w] of this.watchers)
      if (!want.has(p)) {
        w.close()
        this.watchers.delete(p)
      }
    for (const p of want) {
      if (this.watchers.has(p)) continue
      try {
        const w = watch(p, { persistent: false }, () => {
          this.poke()
        })
        w.on('error', () => {
          w.close()
          this.watchers.delete(p)
          this.poke()
        })
        this.watchers.set(p, w)
      } catch {
        /* missing or unwatchable: the periodic rescan covers it */
      }
    }
  }

  poke(): void {
    if (this.closed) return
    clearTimeout(this.debounce)
    this.debounce = setTimeout(() => {
      this.onChange()
    }, this.opts.debounceMs)
    this.debounce.unref()
  }

  close(): void {
    this.closed = true
    clearTimeout(this.debounce)
    clearInterval(this.interval)
    for (const w of this.watchers.values()) w.close()
    this.watchers.clear()
  }
}
