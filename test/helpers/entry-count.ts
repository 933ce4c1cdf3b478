// Records in one LMDB database, from LMDB's own statistics (getCount walks every record).
import type { Database, Key } from 'lmdb'

export function entryCount<V, K extends Key>(db: Database<V, K>): number {
  return (db.getStats() as { entryCount: number }).entryCount
}
