import { v7 } from 'uuid'

/**
 * A new coordination id, `coord-<uuid>`: one per coordinator turn or workflow run. The uuid is
 * time-ordered (UUIDv7), so the journal's coordination index grows at its end, where a random id
 * dirtied a page of it per event.
 */
export function newCoordinationId(): string {
  return `coord-${v7()}`
}
