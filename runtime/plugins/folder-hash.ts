import { createHash } from 'node:crypto'
import { lstatSync, readdirSync, realpathSync, type Stats } from 'node:fs'
import { join, sep } from 'node:path'
import { readRegularFile } from '../config/index.js'

const MAX_FILES = 2000
const MAX_DEPTH = 8
/** Larger files are hashed by size, mtime and inode instead of read whole on every rescan. */
const MAX_HASHED_BYTES = 8 * 1024 * 1024

/** A folder's content hash and the entries it left out, for the host to log. */
export interface FolderDigest {
  digest: string
  /** Each FIFO, device, socket or symlink leaving the plugin directory, by path relative to the folder. */
  skipped: { path: string; why: string }[]
}

/**
 * Content hash of a plugin folder (dotfiles skipped). A file whose size, mtime and inode did not
 * change is not read again, so the periodic rescan costs a stat per file. Only regular files are
 * read, and a symlink is followed only when its target stays inside the plugin directory: a FIFO
 * would block the scan forever and a link to `/dev/zero` or `/` would read without end.
 */
export class FolderHasher {
  private readonly cache = new Map<string, { size: number; mtimeMs: number; ino: number; digest: string }>()

  /** `root` is the plugin directory holding `dir`; nothing outside it is read. */
  hash(dir: string, root: string): FolderDigest {
    const files: { rel: string; st: Stats }[] = []
    const skipped: FolderDigest['skipped'] = []
    let realRoot: string
    try {
      realRoot = realpathSync(root)
    } catch {
      return { digest: 'missing', skipped }
    }
    this.walk(dir, '', 0, realRoot, files, skipped)
    files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))
    const h = createHash('sha256')
    for (const f of files)
      h.update(f.rel)
        .update('\0')
        .update(this.fileDigest(join(dir, f.rel), f.st))
        .update('\n')
    return { digest: h.digest('hex'), skipped }
  }

  /** Drops cached digests under a folder that is gone. */
  forget(dir: string): void {
    for (const k of this.cache.keys()) if (k.startsWith(dir)) this.cache.delete(k)
  }

  private walk(
    dir: string,
    rel: string,
    depth: number,
    realRoot: string,
    out: { rel: string; st: Stats }[],
    skipped: FolderDigest['skipped']
  ): void {
    if (depth > MAX_DEPTH || out.length >= MAX_FILES) return
    let entries
    try {
      entries = readdirSync(join(dir, rel), { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue
      const r = rel === '' ? e.name : `${rel}/${e.name}`
      const st = statInside(join(dir, r), realRoot)
      if (typeof st === 'string') skipped.push({ path: r, why: st })
      else if (st.isDirectory()) this.walk(dir, r, depth + 1, realRoot, out, skipped)
      else if (!st.isFile()) skipped.push({ path: r, why: 'not a regular file' })
      else if (out.length < MAX_FILES) out.push({ rel: r, st })
    }
  }

  private fileDigest(path: string, st: Stats): string {
    const c = this.cache.get(path)
    if (c !== undefined && c.size === st.size && c.mtimeMs === st.mtimeMs && c.ino === st.ino) return c.digest
    let digest: string
    if (st.size > MAX_HASHED_BYTES) digest = `large:${st.size}:${st.mtimeMs}:${st.ino}`
    else {
      try {
        digest = createHash('sha256').update(readRegularFile(path, MAX_HASHED_BYTES)).digest('hex')
      } catch {
        return 'unreadable'
      }
    }
    this.cache.set(path, { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, digest })
    return digest
  }
}

/**
 * The stats of `path`, following a symlink only when its real path stays under `realRoot`;
 * otherwise why it is left out.
 */
export function statInside(path: string, realRoot: string): Stats | string {
  try {
    const st = lstatSync(path)
    if (!st.isSymbolicLink()) return st
    const real = realpathSync(path)
    if (real !== realRoot && !real.startsWith(realRoot + sep)) return `symlink to ${real}, outside the plugin directory`
    return lstatSync(real)
  } catch (err) {
    return `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`
  }
}
