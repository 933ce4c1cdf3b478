import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

const MAX_FILES = 2000
const MAX_DEPTH = 8

/**
 * Content hash of a plugin folder (dotfiles skipped). A file whose size, mtime and inode did not
 * change is not read again, so the periodic rescan costs a stat per file.
 */
export class FolderHasher {
  private readonly cache = new Map<string, { size: number; mtimeMs: number; ino: number; digest: string }>()

  hash(dir: string): string {
    const files: string[] = []
    this.walk(dir, '', 0, files)
    files.sort()
    const h = createHash('sha256')
    for (const rel of files)
      h.update(rel)
        .update('\0')
        .update(this.fileDigest(join(dir, rel)))
        .update('\n')
    return h.digest('hex')
  }

  /** Drops cached digests under a folder that is gone. */
  forget(dir: string): void {
    for (const k of this.cache.keys()) if (k.startsWith(dir)) this.cache.delete(k)
  }

  private walk(dir: string, rel: string, depth: number, out: string[]): void {
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
      let isDir = e.isDirectory()
      if (e.isSymbolicLink()) {
        try {
          isDir = statSync(join(dir, r)).isDirectory()
        } catch {
          continue
        }
      }
      if (isDir) this.walk(dir, r, depth + 1, out)
      else if (out.length < MAX_FILES) out.push(r)
    }
  }

  private fileDigest(path: string): string {
    let st
    try {
      st = statSync(path)
    } catch {
      return 'missing'
    }
    const c = this.cache.get(path)
    if (c !== undefined && c.size === st.size && c.mtimeMs === st.mtimeMs && c.ino === st.ino) return c.digest
    let digest: string
    try {
      digest = createHash('sha256').update(readFileSync(path)).digest('hex')
    } catch {
      return 'unreadable'
    }
    this.cache.set(path, { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, digest })
    return digest
  }
}
