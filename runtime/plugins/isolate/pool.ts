import { SharedProcess } from './shared-process.js'

/** How isolate plugins are grouped into sandbox processes (`platform.sandbox.isolate.*`). */
export interface IsolatePoolOptions {
  /** Most shared sandbox processes; once all are full, new plugins join the least loaded. 0: no cap. */
  processes: number
  /** Plugins a shared process takes before another one is started. 1: a process per plugin. */
  pluginsPerProcess: number
  /** How long a process that answered polls for the next call before it sleeps (µs, `platform.sandbox.spin-us`). */
  spinUs: number
}

/**
 * Sized for a 2-core box: two shared processes let the isolate work of two plugins run on both
 * cores, and eight plugins to a process keeps a crash's collateral (calls in flight of the
 * process-mates) small while 50 plugins stay well under 600 MB.
 */
export const DEFAULT_POOL: IsolatePoolOptions = { processes: 4, pluginsPerProcess: 8, spinUs: 50 }

/**
 * Places plugin isolates into sandbox processes. Shared processes are filled up to
 * `pluginsPerProcess`; a plugin that crashed its process (or any plugin when `pluginsPerProcess`
 * is 1) gets a process of its own that nobody else joins.
 */
export class IsolatePool {
  private readonly shared = new Set<SharedProcess>()

  constructor(readonly opts: IsolatePoolOptions) {}

  place(alone: boolean): SharedProcess {
    const { processes, pluginsPerProcess, spinUs } = this.opts
    if (alone || pluginsPerProcess <= 1) return new SharedProcess(() => {}, spinUs)
    let best: SharedProcess | undefined
    for (const p of this.shared) if (p.open && (best === undefined || p.size < best.size)) best = p
    if (best !== undefined && (best.size < pluginsPerProcess || (processes > 0 && this.shared.size >= processes)))
      return best
    const p = new SharedProcess((gone) => {
      this.shared.delete(gone)
    }, spinUs)
    this.shared.add(p)
    return p
  }
}

const pools = new Map<string, IsolatePool>()

/** One pool per distinct setting in this host process: plugins loaded with the same setting share processes. */
export function poolFor(given: { [K in keyof IsolatePoolOptions]?: number | undefined } = {}): IsolatePool {
  const opts: IsolatePoolOptions = {
    processes: intAtLeast(given.processes, 0, DEFAULT_POOL.processes),
    pluginsPerProcess: intAtLeast(given.pluginsPerProcess, 1, DEFAULT_POOL.pluginsPerProcess),
    spinUs: intAtLeast(given.spinUs, 0, DEFAULT_POOL.spinUs)
  }
  const key = `${opts.processes}/${opts.pluginsPerProcess}/${opts.spinUs}`
  let pool = pools.get(key)
  if (pool === undefined) {
    pool = new IsolatePool(opts)
    pools.set(key, pool)
  }
  return pool
}

/** `v` when it is an integer of at least `min`, else the default. */
function intAtLeast(v: number | undefined, min: number, dflt: number): number {
  return Number.isInteger(v) && v! >= min ? v! : dflt
}
