import { mkdirSync } from 'node:fs'
import { open, type RootDatabase, type Database, type Key } from 'lmdb'
import { drainWritersOnClose } from './lmdb-writer-drain.js'

// where a database opened with shared structures keeps them: a symbol key sorts before every string
const SHARED_STRUCTURES = Symbol.for('structures')

/**
 * One LMDB environment under the data directory, named databases opened once, closed on shutdown.
 * Writes resolve once committed (lmdb's default durable commit), so a process killed right after a
 * resolved write loses nothing.
 */
export class Store {
  private readonly root: RootDatabase
  private readonly dbs = new Map<string, Database<unknown, Key>>()
  private readonly compressed = new Set<string>()
  private readonly shared = new Set<string>()
  private readonly raws = new Map<string, Database<Buffer, Key>>()
  private closed = false
  private readonly nativeClosed: () => Promise<void>

  constructor(readonly path: string) {
    mkdirSync(path, { recursive: true })
    // noSubdir false: lmdb-js would take a directory whose name has a dot (mktemp's) for a file
    this.root = open({ path, maxDbs: 64, compression: false, noSubdir: false })
    this.nativeClosed = drainWritersOnClose(
      (this.root as unknown as { env: Parameters<typeof drainWritersOnClose>[0] }).env
    )
  }

  /**
   * A named database of msgpack values; the same instance for the same name. `compress`: values
   * over 1 000 bytes are stored LZ4-compressed (lmdb-js compresses on its writer thread).
   * `shareStructures`: the key lists of the objects stored are kept once in the database (under a
   * symbol key, outside any string or array key range) instead of in every value, for a database
   * of many small objects of a few shapes: each value is then its fields' values only, which
   * encodes and decodes in about half the time. Values written before it was turned on still read.
   * A database must always be opened the same way: opening one two ways throws.
   */
  db<V = unknown, K extends string | number | (string | number)[] = string>(
    name: string,
    opts: { compress?: boolean; shareStructures?: boolean } = {}
  ): Database<V, K> {
    if (this.closed) throw new Error('store is closed')
    const compress = opts.compress === true
    const share = opts.shareStructures === true
    let db = this.dbs.get(name)
    if (db === undefined) {
      db = this.root.openDB({
        name,
        encoding: 'msgpack',
        ...(compress ? { compression: true } : {}),
        ...(share ? { sharedStructuresKey: SHARED_STRUCTURES } : {})
      })
      this.dbs.set(name, db)
      if (compress) this.compressed.add(name)
      if (share) this.shared.add(name)
    } else if (this.compressed.has(name) !== compress)
      throw new Error(`database ${name} is opened ${compress ? 'without' : 'with'} compression already`)
    else if (this.shared.has(name) !== share)
      throw new Error(`database ${name} is opened ${share ? 'without' : 'with'} shared structures already`)
    return db as Database<V, K>
  }

  /**
   * The records of a database opened with `db()` as the bytes stored, neither decoded nor encoded:
   * for moving records without decoding them (bytes encoded with shared structures decode only
   * through that database's decoder). Not counted again by `pages()`.
   */
  raw<K extends string | number | (string | number)[] = string>(name: string): Database<Buffer, K> {
    if (this.closed) throw new Error('store is closed')
    if (!this.dbs.has(name)) throw new Error(`database ${name} is not open`)
    let db = this.raws.get(name)
    if (db === undefined) {
      db = this.root.openDB({ name, encoding: 'binary' })
      this.raws.set(name, db)
    }
    return db as Database<Buffer, K>
  }

  /**
   * Pages of the environment: those holding data (every database this store opened and the
   * root), and the map's high-water mark (what the file holds: data, free pages kept for reuse,
   * the free list). LMDB never returns pages to the system; a page freed is reused by later writes.
   */
  pages(): { pageSize: number; used: number; map: number } {
    const count = (s: { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number }) =>
      s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages
    const st = this.root.getStats() as {
      pageSize: number
      lastPageNumber: number
      root: { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number }
    }
    let used = count(st.root)
    for (const db of this.dbs.values()) used += count(db.getStats() as Parameters<typeof count>[0])
    return { pageSize: st.pageSize, used, map: st.lastPageNumber + 1 }
  }

  get isOpen(): boolean {
    return !this.closed
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    // retained logs write their pages at the end of an event-loop turn: let the last ones go out
    await new Promise((resolve) => setImmediate(resolve))
    await this.root.flushed
    await this.root.close()
    await this.nativeClosed()
  }
}
